package lora

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantize: MLX's affine quantization of random rows dequantizes to
// within 1.5 steps of every weight (half a step, plus up to one at the
// far end of a group, which the exact larger-magnitude end shifts and the
// level range clips).
func TestQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, bits := range []int{4, 8} {
		for _, sdt := range []string{"F32", "BF16"} {
			q := &quantized{out: 3, in: 128, group: 64, bits: bits, sdt: sdt}
			q.words = make([]uint32, q.out*q.in*bits/32)
			q.scales, q.biases = make([]float32, 6), make([]float32, 6)
			w := make([]float32, q.out*q.in)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
			q.quantize(w)
			back := q.dequantize()
			for i := range w {
				s := float64(q.scales[i/q.group])
				tol := 1.5*math.Abs(s) + 1e-6
				if sdt == "BF16" {
					tol = math.Abs(s)*(1.5+float64(int(1)<<bits)/128) + 1e-6 // bf16 scales are rounded
				}
				if d := math.Abs(float64(back[i] - w[i])); d > tol {
					t.Fatalf("%d-bit %s: weight %d = %v back as %v (scale %v)", bits, sdt, i, w[i], back[i], s)
				}
			}
		}
	}
}
