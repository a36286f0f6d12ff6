package jpeg

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"testing"
)

// errTooLarge is what the tests' size checks return.
var errTooLarge = errors.New("too large")

// limit is a size check refusing sides over maxSide or more than maxPixels.
func limit(maxSide, maxPixels int) func(w, h int) error {
	return func(w, h int) error {
		if w > maxSide || h > maxSide || w*h > maxPixels {
			return fmt.Errorf("%w: %dx%d", errTooLarge, w, h)
		}
		return nil
	}
}

// noLimit is media/picture's default limit (32768 a side, 64 MP).
var noLimit = limit(32768, 64<<20)

// toRGB converts a decoded image to packed RGB: YCbCr through the planar
// rows (RowPlanes, what the resampler reads) or, when packed is set, the
// per-pixel packedRow; gray replicated; RGB-coded files' alpha dropped.
func toRGB(t testing.TB, m image.Image, packed bool) []byte {
	t.Helper()
	w, h := m.Bounds().Dx(), m.Bounds().Dy()
	out := make([]byte, 0, 3*w*h)
	switch m := m.(type) {
	case *image.YCbCr:
		r, g, b, row := make([]uint8, w), make([]uint8, w), make([]uint8, w), make([]uint8, 3*w)
		for y := 0; y < h; y++ {
			if packed {
				packedRow(m, y, row)
				out = append(out, row...)
				continue
			}
			RowPlanes(m, y, r, g, b)
			for x := range r {
				out = append(out, r[x], g[x], b[x])
			}
		}
	case *image.Gray:
		for y := 0; y < h; y++ {
			for _, v := range m.Pix[y*m.Stride:][:w] {
				out = append(out, v, v, v)
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride:][:4*w]
			for x := 0; x < w; x++ {
				out = append(out, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	default:
		t.Fatalf("decoded to %T", m)
	}
	return out
}

// encodePNG is m as a PNG file.
func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// maxDiff is the largest and the mean absolute difference of two equally
// long byte slices.
func maxDiff(a, b []byte) (int, float64) {
	m, sum := 0, 0
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
		sum += d
	}
	return m, float64(sum) / float64(max(len(a), 1))
}
