package gocpu

import (
	"math"
	"math/rand"
	"testing"
)

// The integer prefill's kernel per set: the bit-for-bit check the
// architectures' tests share, and the kernel's speed per set side by side.

// q4i8Func is a kernel set's q4i8.
type q4i8Func = func(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int)

// checkQ4i8Bits: got's 4×8 blocks are want's bit for bit (a NaN for a
// NaN), on random values, on the extremes (every weight 15 against ±127,
// the largest integer sums) and with one block's d NaN, written with a
// row stride of 11 and nothing outside the block touched.
func checkQ4i8Bits(t *testing.T, name string, got, want q4i8Func) {
	t.Helper()
	r := rand.New(rand.NewSource(26))
	const ldc = 11
	for _, mode := range []string{"random", "extreme", "nan"} {
		for _, bpg := range []int{1, 2, 4} {
			groups := 3
			blocks := groups * bpg
			p := make([]uint32, blocks*64)
			xq := make([]int8, blocks*128)
			for i := range p {
				p[i] = r.Uint32() & 0x0f0f0f0f
				if mode == "extreme" {
					p[i] = 0x0f0f0f0f
				}
			}
			for i := range xq {
				xq[i] = int8(r.Intn(255) - 127)
				if mode == "extreme" {
					xq[i] = int8(127 - 254*(i/128%2))
				}
			}
			s, b := randFloats(r, 8*groups, 0.05), randFloats(r, 8*groups, 1)
			d, xs := randFloats(r, 4*blocks, 0.02), randFloats(r, 4*groups, 3)
			if mode == "nan" {
				d[4*(blocks-1)+2] = float32(math.NaN())
			}
			var cw, cg [4 * ldc]float32
			for i := range cw {
				cw[i], cg[i] = -7, -7
			}
			want(p, s, b, xq, d, xs, bpg, cw[:], ldc)
			got(p, s, b, xq, d, xs, bpg, cg[:], ldc)
			for i := range cw {
				g, w := cg[i], cw[i]
				if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
					t.Fatalf("%s %s bpg=%d c[%d][%d] = %g, want %g", name, mode, bpg, i/ldc, i%ldc, g, w)
				}
			}
		}
	}
}

// BenchmarkQ4i8Kernel: one 4×8 block of q4i8 over K = 1536 (E2B's width,
// groups of 64) on cache-resident data, per kernel set side by side: the
// compute ceiling of the integer prefill. GOP/cpu-s divides by the
// process's CPU time, which a busy machine's time slicing leaves be.
func BenchmarkQ4i8Kernel(b *testing.B) {
	r := rand.New(rand.NewSource(27))
	const K, gs = 1536, 64
	blocks, groups := K/intBlock, K/gs
	p, xq := make([]uint32, blocks*64), make([]int8, blocks*128)
	for i := range p {
		p[i] = r.Uint32() & 0x0f0f0f0f
	}
	for i := range xq {
		xq[i] = int8(r.Intn(255) - 127)
	}
	s, bi := randFloats(r, 8*groups, 0.05), randFloats(r, 8*groups, 1)
	d, xs := randFloats(r, 4*blocks, 0.02), randFloats(r, 4*groups, 3)
	var c [32]float32
	for _, ks := range kernelSets() {
		b.Run(ks.name, func(b *testing.B) {
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				ks.q4i8(p, s, bi, xq, d, xs, gs/intBlock, c[:], 8)
			}
			ops := 2 * 4 * 8 * float64(K) * float64(b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, "GOP/s")
			b.ReportMetric(ops/(processCPU()-cpu0).Seconds()/1e9, "GOP/cpu-s")
		})
	}
}
