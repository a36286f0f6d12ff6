//go:build !purego

package gocpu

import (
	"math"
	"math/rand"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestIntKernelSetsEqual: the AVX-512 kernels (VPMADDUBSW on zmm, and
// VPDPBUSD) sum the same integers as the AVX2 one and scale them in the
// same order, so their blocks are the AVX2 kernel's bit for bit, on random
// values and on the extremes (every weight 15 against blocks of ±127,
// where the int16 pair sums are largest).
func TestIntKernelSetsEqual(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("integer prefill kernels not compared: this CPU lacks AVX2/FMA (or GODEBUG turned them off)")
	}
	sets := []kernelSet{}
	for _, ks := range testedKernelSets(t) {
		if ks.name != "go" && ks.name != "avx2" {
			sets = append(sets, ks)
		}
	}
	if len(sets) == 0 {
		t.Skip("no AVX-512 kernel set runs here: only the AVX2 integer kernel ran (TestIntKernel)")
	}
	r := rand.New(rand.NewSource(23))
	for _, extreme := range []bool{false, true} {
		for _, bpg := range []int{1, 2, 4} {
			c := randIntKernelCase(r, 3, bpg, extreme)
			want := c.run(avx2Kernels, intCols)
			for _, ks := range sets {
				got := c.run(ks, intCols)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s extreme=%v bpg=%d c[%d]: %g, avx2 %g", ks.name, extreme, bpg, i, got[i], want[i])
					}
				}
				t.Logf("%s extreme=%v bpg=%d: the AVX2 kernel's bits", ks.name, extreme, bpg)
			}
		}
	}
}
