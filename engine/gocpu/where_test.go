package gocpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"perch/engine/tensor"
)

// TestWhere: the select picks x where the condition holds and y elsewhere,
// whether every operand is whole or a single value (the flat path: a
// grammar's mask over the vocabulary against -inf) or broadcast along a
// dimension (the index walk).
func TestWhere(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		cond, x, y, out []int
	}{
		{[]int{1000}, []int{1, 1000}, []int{}, []int{1, 1000}},
		{[]int{4, 5}, []int{4, 5}, []int{4, 5}, []int{4, 5}},
		{[]int{}, []int{4, 5}, []int{1}, []int{4, 5}},
		{[]int{4, 1}, []int{4, 5}, []int{1, 5}, []int{4, 5}}, // broadcast: the walk
	} {
		cond := make([]bool, numel(c.cond))
		for i := range cond {
			cond[i] = rng.IntN(3) > 0
		}
		xs, ys := whereVals(rng, numel(c.x)), whereVals(rng, numel(c.y))
		got, err := b.Float32s(b.Where(b.FromBool(cond, c.cond), b.FromFloat32(xs, c.x, tensor.Float32), b.FromFloat32(ys, c.y, tensor.Float32)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != numel(c.out) {
			t.Fatalf("%v: %d values, want %d", c, len(got), numel(c.out))
		}
		at := func(shape []int, vals []float32, k int) float32 { // k's value in a broadcast operand
			if len(vals) == 1 {
				return vals[0]
			}
			idx, off := 0, len(c.out)-len(shape)
			stride := 1
			for d := len(c.out) - 1; d >= 0; d-- {
				coord := k % c.out[d]
				k /= c.out[d]
				if d >= off && shape[d-off] != 1 {
					idx += coord * stride
				}
				if d >= off {
					stride *= shape[d-off]
				}
			}
			return vals[idx]
		}
		cf := make([]float32, len(cond))
		for i, v := range cond {
			if v {
				cf[i] = 1
			}
		}
		for k, g := range got {
			want := at(c.y, ys, k)
			if at(c.cond, cf, k) == 1 {
				want = at(c.x, xs, k)
			}
			if g != want {
				t.Fatalf("%v: element %d is %v, want %v", c, k, g, want)
			}
		}
	}
}

func whereVals(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64())
	}
	if n == 1 {
		out[0] = float32(math.Inf(-1))
	}
	return out
}
