package jpeg

import (
	"image"
	"math/rand"
	"testing"
)

// The planar rows the resampler reads equal packedRow, the per-pixel
// conversion, for every chroma ratio and small or odd size.
func TestRowPlanesMatchPackedRow(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	ratios := []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410}
	for n := 0; n < 300; n++ {
		w, h := 1+rng.Intn(70), 1+rng.Intn(5)
		m := image.NewYCbCr(image.Rect(0, 0, w, h), ratios[n%len(ratios)])
		for _, p := range [][]uint8{m.Y, m.Cb, m.Cr} {
			for i := range p {
				p[i] = uint8(rng.Intn(256))
			}
		}
		r, g, b := make([]uint8, w), make([]uint8, w), make([]uint8, w)
		want := make([]uint8, 3*w)
		for y := 0; y < h; y++ {
			RowPlanes(m, y, r, g, b)
			packedRow(m, y, want)
			for x := 0; x < w; x++ {
				if [3]uint8{r[x], g[x], b[x]} != [3]uint8(want[3*x:]) {
					t.Fatalf("%v %dx%d: pixel (%d,%d) %v, packedRow %v", m.SubsampleRatio, w, h, x, y, [3]uint8{r[x], g[x], b[x]}, want[3*x:3*x+3])
				}
			}
		}
	}
}
