//go:build unix

package engine

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"perch/engine/gocpu"
)

// BenchmarkPrefillInt8 prefills the E2B-shaped checkpoint exact and with
// the int8 prefill, alternating the two in one run (64 and 256 tokens; 1
// and 2 workers) on the kernel set this process runs (GODEBUG=cpu.avx512f=off
// gives the AVX2 set). Besides wall-clock speed (the best of the runs) it
// reports tokens per CPU-second of the process, which a machine shared
// with other work leaves be, and int8's ratio to exact on both.
func BenchmarkPrefillInt8(b *testing.B) {
	set := gocpu.New(gocpu.Options{}).Kernels()
	for _, prompt := range []int{64, 256} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("prompt=%d/threads=%d/%s", prompt, threads, set), func(b *testing.B) {
				dir := benchModel(b, "e2b-shaped-4bit")
				var wall, cpu [2]float64 // best tok/s, tok/cpu-s: exact, int8
				var engines [2]*Engine
				for mode, int8 := range []bool{false, true} {
					e, err := Open(dir, Options{Backend: BackendGo, Threads: threads, IntPrefill: int8})
					if err != nil {
						b.Fatal(err)
					}
					defer e.Close()
					engines[mode] = e
				}
				for i := 0; i < b.N; i++ {
					for mode := range engines {
						w, c := prefillOnce(b, engines[mode], prompt, i)
						wall[mode], cpu[mode] = max(wall[mode], w), max(cpu[mode], c)
					}
				}
				b.ReportMetric(wall[0], "exact_tok/s")
				b.ReportMetric(wall[1], "int8_tok/s")
				b.ReportMetric(cpu[0], "exact_tok/cpu-s")
				b.ReportMetric(cpu[1], "int8_tok/cpu-s")
				b.ReportMetric(cpu[1]/cpu[0], "int8/exact_cpu_x")
				b.ReportMetric(wall[1]/wall[0], "int8/exact_x")
			})
		}
	}
}

// prefillOnce runs one prompt of n tokens (a new first token per run i,
// so that no prefix is reused) to its first token and returns the
// prefill's tokens per second and per CPU-second of the process.
func prefillOnce(b *testing.B, e *Engine, n, i int) (tokS, tokCPU float64) {
	prompt := make([]int32, n)
	for j := range prompt {
		prompt[j] = int32(3 + (j+i)*37%1000)
	}
	zero := float32(0)
	c0 := processCPU()
	stats := generateStats(b, e, Request{PromptIDs: prompt, MaxTokens: 1, IgnoreEOS: true, Sampling: Sampling{Temperature: &zero}})
	if stats == nil {
		b.Fatal("no stats")
	}
	return stats.PrefillTokS, float64(n) / (processCPU() - c0).Seconds()
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
