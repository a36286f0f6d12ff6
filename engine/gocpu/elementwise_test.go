package gocpu

import (
	"math/rand/v2"
	"testing"

	"perch/engine/tensor"
)

// TestFastArithMatchesGeneral: the tight loops give the same bits as the
// per-element path for every layout they take.
func TestFastArithMatchesGeneral(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(shape ...int) *T {
		v := make([]float32, numel(shape))
		for i := range v {
			v[i] = rng.Float32()*4 - 2
		}
		return b.FromFloat32(v, shape, tensor.Float32).(*T)
	}
	ops := map[byte]floatFn{
		'+': func(a, c float32) float32 { return a + c }, '-': func(a, c float32) float32 { return a - c },
		'*': func(a, c float32) float32 { return a * c }, '/': func(a, c float32) float32 { return a / c },
	}
	layouts := [][2][]int{
		{{3, 5, 7}, {3, 5, 7}}, {{3, 5, 7}, {}}, {{3, 5, 7}, {7}}, {{3, 5, 7}, {1, 5, 7}}, {{}, {4, 6}}, {{2, 40000}, {40000}},
	}
	for code, f := range ops {
		for _, l := range layouts {
			x, y := rnd(l[0]...), rnd(l[1]...)
			got := b.arithOp("op", code, x, y, f, nil).(*T)
			want := b.arithOp("op", 0, x, y, f, nil).(*T)
			if b.Err() != nil {
				t.Fatal(b.Err())
			}
			for i := range want.f {
				if got.f[i] != want.f[i] {
					t.Fatalf("%c %v %v: element %d %v, want %v", code, l[0], l[1], i, got.f[i], want.f[i])
				}
			}
		}
	}
}
