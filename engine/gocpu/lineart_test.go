package gocpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"perch/engine/tensor"
)

// linearTRef is dx = dy · W[e] in float64 from the plain dequantized rows,
// and the scale Σ_o |dy[r,o]·W[o,i]| of each output.
func linearTRef(w *weight, e int, dy []float32, rows int) (ref, scale []float32) {
	ref, scale = make([]float32, rows*w.in), make([]float32, rows*w.in)
	acc, abs := make([]float64, rows*w.in), make([]float64, rows*w.in)
	buf := make([]float32, w.in)
	for o := 0; o < w.out; o++ {
		w.row(e, o, buf)
		for r := 0; r < rows; r++ {
			g := float64(dy[r*w.out+o])
			for i, v := range buf {
				acc[r*w.in+i] += g * float64(v)
				abs[r*w.in+i] += math.Abs(g * float64(v))
			}
		}
	}
	for i := range acc {
		ref[i], scale[i] = float32(acc[i]), float32(abs[i])
	}
	return ref, scale
}

// TestLinearT: dy · W on both paths, every layout (dense, 2-byte, 4- and
// 8-bit in the kernels' layouts and the generic ones), matches float64.
func TestLinearT(t *testing.T) {
	for _, blk := range [][2]int{{lineartBlockBytes, lineartBlockRows}, {4 << 10, 8}} {
		t.Run(fmt.Sprintf("block=%d,%d", blk[0], blk[1]), func(t *testing.T) {
			defer func(bytes, rows int) { lineartBlockBytes, lineartBlockRows = bytes, rows }(lineartBlockBytes, lineartBlockRows)
			// 4 KiB by 8 rows: several row and column blocks per weight
			lineartBlockBytes, lineartBlockRows = blk[0], blk[1]
			testLinearT(t)
		})
	}
}

func testLinearT(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(5))
		plain, fast := New(Options{Plain: true}), New(Options{Threads: 3})
		for _, c := range linearCases {
			for _, rows := range []int{1, 3, 37} {
				l := randLinear(r, 0, c.out, c.in, c.bits, c.gs, false)
				ls := []*tensor.Linear{l}
				if half, _ := halfLinear(fast, l, false); c.in%2 == 0 {
					ls = append(ls, half)
				}
				for _, l := range ls {
					dy := randFloats(r, rows*c.out, 1)
					w, _ := fast.checkLinear("test", l)
					ref, scale := linearTRef(w, 0, dy, rows)
					for name, b := range map[string]*Backend{"plain": plain, "fast": fast} {
						out := b.LinearT(b.FromFloat32(dy, []int{1, rows, c.out}, tensor.Float32), l)
						got := must(b.Float32s(out))
						if s := out.Shape(); len(s) != 3 || s[2] != c.in {
							t.Fatalf("%s: shape %v", name, s)
						}
						if e := relErr(t, got, ref, scale); e > 1e-5 {
							t.Fatalf("%s %+v rows %d: rel err %.3g", name, c, rows, e)
						}
					}
				}
			}
		}
	})
}

// TestGatherLinearT: every (row, slot) times its expert, both paths.
func TestGatherLinearT(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	plain, fast := New(Options{Plain: true}), New(Options{Threads: 2})
	for _, c := range []struct{ in, out, bits, gs int }{{64, 12, 4, 32}, {128, 9, 8, 64}, {40, 7, 0, 0}} {
		const E, N, K = 5, 6, 3
		l := randLinear(r, E, c.out, c.in, c.bits, c.gs, false)
		ids := make([]int32, N*K)
		for i := range ids {
			ids[i] = int32(r.Intn(E))
		}
		dy := randFloats(r, N*K*c.out, 1)
		w, _ := fast.checkLinear("test", l)
		ref, scale := make([]float32, N*K*c.in), make([]float32, N*K*c.in)
		for p, e := range ids {
			rr, ss := linearTRef(w, int(e), dy[p*c.out:(p+1)*c.out], 1)
			copy(ref[p*c.in:], rr)
			copy(scale[p*c.in:], ss)
		}
		for name, b := range map[string]*Backend{"plain": plain, "fast": fast} {
			got := must(b.Float32s(b.GatherLinearT(b.FromFloat32(dy, []int{N, K, c.out}, tensor.Float32), l, b.FromInt32(ids, []int{N, K}))))
			if e := relErr(t, got, ref, scale); e > 1e-5 {
				t.Fatalf("%s %+v: rel err %.3g", name, c, e)
			}
		}
	}
	b := New(Options{})
	l := randLinear(r, 2, 4, 8, 0, 0, false)
	b.GatherLinearT(b.Zeros([]int{2, 2, 5}, tensor.Float32), l, b.Zeros([]int{2, 2}, tensor.Int32))
	if b.Err() == nil {
		t.Fatal("a gradient of the wrong width was accepted")
	}
}
