package engine

import (
	"strconv"
	"testing"

	"perch/engine/gocpu"
)

// BenchmarkDecodeInt8: the E2B-shaped model's decode on the Go backend,
// exact against the int8 decode (Options.IntDecode), for 1 and 2 threads,
// alternated rep by rep in one run so that a shared machine's load falls
// on both alike: the median of each and the median of the per-rep ratios;
// then the bytes read per decode step and the share of a read-bandwidth
// probe (as many workers, measured after) each median reaches.
// The kernel set is the CPU's default (GODEBUG=cpu.avx512f=off for AVX2).
//
//	go test -run '^$' -bench DecodeInt8 -benchtime 1x ./engine
func BenchmarkDecodeInt8(b *testing.B) {
	reps := 5
	if testing.Short() {
		reps = 1
	}
	dir := benchModel(b, "e2b-shaped-4bit")
	for _, threads := range []int{1, 2} {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			var exact, int8, ratio []float64
			for i := 0; i < b.N*reps; i++ {
				c := benchCase{model: "e2b-shaped-4bit", backend: BackendGo, prompt: 16, steps: 16, threads: threads, exact: true}
				e := runBench(b, dir, c).stats.DecodeTokS
				c.int8dec = true
				q := runBench(b, dir, c).stats.DecodeTokS
				exact, int8, ratio = append(exact, e), append(int8, q), append(ratio, q/e)
			}
			b.ReportMetric(median(exact), "exact_tok/s")
			b.ReportMetric(median(int8), "int8_tok/s")
			b.ReportMetric(median(ratio), "int8/exact")
			// bytes per decode step (the int8 decode reads the exact one's
			// weights: the one-row ops count the same) against the probe
			c := benchCase{model: "e2b-shaped-4bit", backend: BackendGo, prompt: 16, steps: 16, threads: threads, int8dec: true}
			r := openBench(b, dir, c)
			r0 := gocpu.DecodeReads()
			r.request(b, c, 16, 1)
			r1 := gocpu.DecodeReads()
			r.request(b, c, 0, 2)
			perToken := float64((r1-r0)-(gocpu.DecodeReads()-r1)) / 16
			r.e.Close()
			bw := gocpu.ReadBandwidth(512<<20, threads, 5)
			b.ReportMetric(perToken/1e6, "read_MB/token")
			b.ReportMetric(bw/1e9, "probe_GB/s")
			b.ReportMetric(100*perToken*median(exact)/bw, "exact_bw_%")
			b.ReportMetric(100*perToken*median(int8)/bw, "int8_bw_%")
			b.Logf("kernels %s; exact %.1f, int8 %.1f tok/s", gocpu.New(gocpu.Options{}).Kernels(), exact, int8)
		})
	}
}
