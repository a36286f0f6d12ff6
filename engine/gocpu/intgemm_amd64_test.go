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

// TestPanelWords16: the AVX2 panel move puts every word where load's Go
// loop puts it, for widths of 1, 2 and 24 steps and panels starting on
// rows 0 and 5 of a larger matrix.
func TestPanelWords16(t *testing.T) {
	if !hasAVX2 {
		t.Skip("AVX2 panel move not run: this CPU lacks AVX2 (or GODEBUG turned it off)")
	}
	r := rand.New(rand.NewSource(16))
	for _, words := range []int{8, 16, 192} {
		for _, row0 := range []int{0, 5} {
			w := &weight{words: words, packed: make([]uint32, (row0+intCols+3)*words)}
			for i := range w.packed {
				w.packed[i] = r.Uint32()
			}
			var want, got intPanel
			want.p, got.p = make([]uint32, intCols*words), make([]uint32, intCols*words)
			want.loadWords(w, row0, intCols)
			if !panelWords16(got.p, w.packed, row0, words) {
				t.Fatalf("words=%d: the AVX2 move declined", words)
			}
			for i := range want.p {
				if got.p[i] != want.p[i] {
					t.Fatalf("words=%d row0=%d p[%d] (word %d, row %d) = %#x, want %#x", words, row0, i, i/intCols, i%intCols, got.p[i], want.p[i])
				}
			}
		}
	}
	if panelWords16(make([]uint32, intCols*12), make([]uint32, intCols*12), 0, 12) {
		t.Fatal("words=12 (not a multiple of 8) was taken")
	}
}
