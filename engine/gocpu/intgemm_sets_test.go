package gocpu

import (
	"math"
	"math/rand"
	"testing"
)

// The integer prefill's kernel per set: the bit-for-bit check the
// architectures' tests share, and the kernel's speed per set side by side.

// checkIntBits: got's blocks are want's bit for bit (a NaN for a NaN), on
// random values, on the extremes (every weight 15 against ±127: the
// integer sums at their largest) and with one block's d NaN, written at
// stride intCols+3.
func checkIntBits(t *testing.T, got, want kernelSet) {
	t.Helper()
	r := rand.New(rand.NewSource(26))
	for _, mode := range []string{"random", "extreme", "nan"} {
		for _, bpg := range []int{1, 2, 4} {
			c := randIntKernelCase(r, 3, bpg, mode == "extreme")
			if mode == "nan" {
				c.d[len(c.d)-3] = float32(math.NaN())
			}
			w, g := c.run(want, intCols+3), c.run(got, intCols+3)
			for i := range w {
				if math.Float32bits(g[i]) != math.Float32bits(w[i]) && !(g[i] != g[i] && w[i] != w[i]) {
					t.Fatalf("%s %s bpg=%d c[%d][%d] = %g, %s %g", got.name, mode, bpg, i/(intCols+3), i%(intCols+3), g[i], want.name, w[i])
				}
			}
		}
	}
}

// BenchmarkQ4i8Kernel: one 8×16 block of q4i8 over K = 1536 (E2B's width,
// groups of 64) on cache-resident data, per kernel set side by side: the
// compute ceiling of the integer prefill. GOP/cpu-s divides by the
// process's CPU time, which a busy machine's time slicing leaves be.
func BenchmarkQ4i8Kernel(b *testing.B) {
	const K, gs = 1536, 64
	c := randIntKernelCase(rand.New(rand.NewSource(27)), K/gs, gs/intBlock, false)
	out := make([]float32, intRows*intCols)
	for _, ks := range kernelSets() {
		b.Run(ks.name, func(b *testing.B) {
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				ks.q4i8(c.p, c.s, c.b, c.xq, c.d, c.x, c.bpg, out, intCols)
			}
			ops := 2 * intRows * intCols * float64(K) * float64(b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOP/s")
			b.ReportMetric(ops/(processCPU()-cpu0).Seconds()/1e9, "GOP/cpu-s")
		})
	}
}
