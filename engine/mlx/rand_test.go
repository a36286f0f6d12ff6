package mlx

import (
	"math"
	"math/rand/v2"
)

// testRand makes reproducible inputs.
type testRand struct{ r *rand.Rand }

func newRand(seed uint64) testRand { return testRand{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))} }

// f32 returns n values uniform in [-scale, scale).
func (t testRand) f32(n int, scale float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = (t.r.Float32()*2 - 1) * scale
	}
	return out
}

// pos returns n values uniform in [lo, hi).
func (t testRand) pos(n int, lo, hi float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = lo + t.r.Float32()*(hi-lo)
	}
	return out
}

func (t testRand) i32(n, hi int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(t.r.IntN(hi))
	}
	return out
}

func (t testRand) bools(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = t.r.IntN(2) == 1
	}
	return out
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// bf16 rounds v to bfloat16 (round to nearest even) and back.
func bf16(v float32) float32 {
	u := math.Float32bits(v)
	u += 0x7fff + (u>>16)&1
	return math.Float32frombits(u &^ 0xffff)
}
