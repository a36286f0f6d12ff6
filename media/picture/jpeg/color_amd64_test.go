//go:build !purego

package jpeg

import (
	"bytes"
	"image"
	"math/rand"
	"testing"
)

// The AVX2 colour kernels equal the Go loops for every ratio and width.
func TestColorKernelsMatchGo(t *testing.T) {
	if !hasColorKernels {
		t.Skip("no AVX2 on this CPU")
	}
	defer func() { hasColorKernels = true }()
	rng := rand.New(rand.NewSource(4))
	ratios := []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420}
	for n := 0; n < 200; n++ {
		w, h := 1+rng.Intn(120), 1+rng.Intn(6)
		m := image.NewYCbCr(image.Rect(0, 0, w, h), ratios[n%3])
		for _, p := range [][]uint8{m.Y, m.Cb, m.Cr} {
			for i := range p {
				p[i] = uint8(rng.Intn(256))
				if n%5 == 0 {
					p[i] = 255 * uint8(rng.Intn(2))
				}
			}
		}
		for y := 0; y < h; y++ {
			var got, want [3][]uint8
			for c := range got {
				got[c], want[c] = make([]uint8, w), make([]uint8, w)
			}
			hasColorKernels = true
			RowPlanes(m, y, got[0], got[1], got[2])
			hasColorKernels = false
			RowPlanes(m, y, want[0], want[1], want[2])
			for c := range got {
				if !bytes.Equal(got[c], want[c]) {
					t.Fatalf("%v %dx%d row %d plane %d: AVX2 %v, Go %v", m.SubsampleRatio, w, h, y, c, got[c], want[c])
				}
			}
		}
	}
}
