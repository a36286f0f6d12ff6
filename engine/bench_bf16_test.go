package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
)

// bf16Model returns the E2B-shaped text model with bf16 weights (no
// towers), generated once into build/bench-cache.
func bf16Model(b *testing.B) string {
	dir := filepath.Join("..", "build", "bench-cache", "e2b-shaped-bf16-text")
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
		return dir
	}
	var doc map[string]any
	if err := json.Unmarshal(e2bShapedConfig(), &doc); err != nil {
		b.Fatal(err)
	}
	delete(doc, "vision_config")
	delete(doc, "audio_config")
	cfg, _ := json.Marshal(doc)
	b.Logf("generating the E2B-shaped bf16 checkpoint in %s (once)", dir)
	if err := synth.Write(dir, cfg, synth.Options{Seed: 1, BF16: true}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkBF16Decode runs the E2B-shaped bf16 text model on the Go
// backend twice in one process: with its bf16 weights kept at 2 bytes
// (the default) and widened to float32 at load (the layout before), and
// reports decode speed, the process's peak resident memory during the run
// and the checkpoint's size.
func BenchmarkBF16Decode(b *testing.B) {
	dir := bf16Model(b)
	st, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		widen bool
	}{{"2byte", false}, {"widened", true}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runtime.GC()
				debug.FreeOSMemory()
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak resident size here: %v", err)
				}
				tokS := bf16Decode(b, dir, gocpu.Options{WidenHalf: c.widen}, 8, 16)
				b.ReportMetric(tokS, "decode_tok/s")
				b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak_rss_MiB")
				b.ReportMetric(float64(st.Size())/(1<<20), "file_MiB")
			}
		})
	}
}

// bf16Decode loads dir, prefills prompt tokens and times steps greedy
// decode steps.
func bf16Decode(b *testing.B, dir string, opt gocpu.Options, prompt, steps int) float64 {
	be := gocpu.New(opt)
	defer be.Close()
	m, err := gemma4.Load(be, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ids := make([]int32, prompt)
	for i := range ids {
		ids[i] = int32(3 + i*37%1000)
	}
	caches := m.Text.NewCaches()
	next := func(in []int32) int32 {
		logits, err := be.Float32s(m.Text.Forward(gemma4.Inputs{IDs: be.FromInt32(in, []int{1, len(in)}), LastOnly: true}, caches))
		if err != nil {
			b.Fatal(err)
		}
		best := 0
		for j, v := range logits {
			if v > logits[best] {
				best = j
			}
		}
		return int32(best)
	}
	tok := next(ids)
	t0 := time.Now()
	for s := 0; s < steps; s++ {
		tok = next([]int32{tok})
	}
	return float64(steps) / time.Since(t0).Seconds()
}

// peakRSS reads VmHWM (bytes) from /proc/self/status.
func peakRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
