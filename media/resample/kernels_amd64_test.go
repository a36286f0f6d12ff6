//go:build !purego

package resample

import (
	"bytes"
	"math/rand"
	"testing"
)

// The AVX2 passes equal the Go passes byte for byte, down, up and across
// group and 32-byte boundaries.
func TestVectorKernelsMatchGo(t *testing.T) {
	if !hasVectorKernels {
		t.Skip("no AVX2 on this CPU")
	}
	defer func() { hasVectorKernels = true }()
	rng := rand.New(rand.NewSource(3))
	for n := 0; n < 60; n++ {
		w, h := 1+rng.Intn(200), 1+rng.Intn(200)
		dw, dh := 1+rng.Intn(150), 1+rng.Intn(150)
		if n%3 == 0 {
			w, dw = 1000+rng.Intn(3000), 1+rng.Intn(200) // large downscale: many taps
		}
		src := make([]uint8, 3*w*h)
		for i := range src {
			src[i] = uint8(rng.Intn(256))
			if n%4 == 1 {
				src[i] = 255 * uint8(rng.Intn(2)) // extremes: overshoot and clamping
			}
		}
		hasVectorKernels = true
		vec, err := BicubicRGB(src, w, h, dw, dh)
		if err != nil {
			t.Fatal(err)
		}
		hasVectorKernels = false
		ref, err := BicubicRGB(src, w, h, dw, dh)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(vec, ref) {
			t.Fatalf("%dx%d -> %dx%d: AVX2 and Go differ", w, h, dw, dh)
		}
	}
}
