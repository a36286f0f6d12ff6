package mlx

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// TestLinearTAdjoint: LinearT is Linear's transpose, <dy·W, x> = <dy, x·Wᵀ>,
// for the dense and 4-bit fixture projections, and GatherLinearT likewise
// for a stacked weight (the fixture's layers as experts).
func TestLinearTAdjoint(t *testing.T) {
	b := newBackend(t)
	r := rand.New(rand.NewPCG(1, 2))
	randT := func(shape ...int) tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return b.FromFloat32(v, shape, tensor.Float32)
	}
	dot := func(x, y tensor.Tensor) float64 {
		v, err := b.Float32s(b.Sum(b.Reshape(b.Mul(x, y), -1), 0, false))
		if err != nil {
			t.Fatal(err)
		}
		return float64(v[0])
	}
	for _, name := range []string{"text-tiny", "text-tiny-q4"} {
		m, err := gemma4.Load(b, filepath.Join(testdata, "models", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []*tensor.Linear{m.Text.Layers[0].MLP.UpProj, m.Text.Layers[4].MLP.DownProj, m.Text.EmbedTokens} {
			x, dy := randT(1, 5, l.In), randT(1, 5, l.Out)
			lhs, rhs := dot(b.LinearT(dy, l), x), dot(dy, b.Linear(x, l))
			if math.Abs(lhs-rhs) > 1e-4*math.Max(1, math.Abs(rhs)) {
				t.Fatalf("%s %dx%d: <dy W, x> = %v, <dy, x Wt> = %v", name, l.Out, l.In, lhs, rhs)
			}
		}
		m.Close()
	}
	// A stacked weight: 3 experts of [8, 16] dense.
	w := &tensor.Linear{W: randT(3, 8, 16), In: 16, Out: 8}
	idx := b.FromInt32([]int32{0, 2, 1, 1, 2, 0}, []int{3, 2})
	x, dy := randT(3, 2, 16), randT(3, 2, 8)
	lhs, rhs := dot(b.GatherLinearT(dy, w, idx), x), dot(dy, b.GatherLinear(x, w, idx))
	if math.Abs(lhs-rhs) > 1e-4*math.Max(1, math.Abs(rhs)) {
		t.Fatalf("gather: %v vs %v", lhs, rhs)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}
