//go:build !purego

package gocpu

import (
	"math"
	"math/rand"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestIntKernelVNNIEqualsAVX2: the VPDPBUSD kernel sums the same integers
// as the VPMADDUBSW one and scales them in the same order, so its blocks
// are the AVX2 kernel's bit for bit, on random values and on the extremes
// (every weight 15 against ±127, where the AVX2 kernel's int16 pair sums
// are largest).
func TestIntKernelVNNIEqualsAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !hasAVX512() || !cpu.X86.HasAVX512VNNI {
		t.Skip("kernel set avx512vnni not run: this CPU lacks AVX2/FMA or AVX-512 F/BW/VL with VNNI (or GODEBUG turned them off)")
	}
	r := rand.New(rand.NewSource(23))
	for _, extreme := range []bool{false, true} {
		for _, bpg := range []int{1, 2, 4} {
			groups := 3
			blocks := groups * bpg
			p := make([]uint32, blocks*64)
			xq := make([]int8, blocks*128)
			for i := range p {
				p[i] = r.Uint32() & 0x0f0f0f0f
				if extreme {
					p[i] = 0x0f0f0f0f
				}
			}
			for i := range xq {
				xq[i] = int8(r.Intn(255) - 127)
				if extreme {
					xq[i] = int8(127 - 254*(i/128%2))
				}
			}
			s, b := randFloats(r, 8*groups, 0.05), randFloats(r, 8*groups, 1)
			d, xs := randFloats(r, 4*blocks, 0.02), randFloats(r, 4*groups, 3)
			var want, got [32]float32
			q4i8AVX2(p, s, b, xq, d, xs, bpg, want[:], 8)
			q4i8VNNI(p, s, b, xq, d, xs, bpg, got[:], 8)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("extreme=%v bpg=%d c[%d]: vnni %g, avx2 %g", extreme, bpg, i, got[i], want[i])
				}
			}
		}
	}
}
