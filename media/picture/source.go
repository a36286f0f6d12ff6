package picture

import (
	"image"
	"perch/media/picture/jpeg"
	"sync"
)

// Source is a decoded image whose RGB conversion may still be pending. It
// serves planar rows to the resampler (resample.Rows) and materialises on
// demand.
type Source struct {
	w, h int
	ycc  *image.YCbCr // JPEG planes, converted per row (orientation 1 only)
	gray *image.Gray  // grayscale JPEG, replicated per row
	once sync.Once
	rgb  *RGB
}

// FromRGB wraps a converted image.
func FromRGB(m *RGB) *Source { return &Source{w: m.W, h: m.H, rgb: m} }

// Size is the upright size.
func (s *Source) Size() (int, int) { return s.w, s.h }

// RGB returns the whole image as RGB, converting it once if needed.
func (s *Source) RGB() *RGB {
	s.once.Do(func() {
		switch {
		case s.ycc != nil:
			s.rgb = toRGB(s.ycc, false)
		case s.gray != nil:
			s.rgb = toRGB(s.gray, false)
		}
	})
	return s.rgb
}

// Row writes row y's red, green and blue samples to r, g and b (len ≥ w).
func (s *Source) Row(y int, r, g, b []uint8) {
	r, g, b = r[:s.w], g[:s.w], b[:s.w]
	// The planes are read first: they never change, while rgb may be being
	// set by RGB on another goroutine (a pooled source is shared).
	switch {
	case s.ycc != nil:
		jpeg.RowPlanes(s.ycc, y, r, g, b)
	case s.gray != nil:
		row := s.gray.Pix[y*s.gray.Stride:][:s.w]
		copy(r, row)
		copy(g, row)
		copy(b, row)
	default:
		row := s.rgb.Pix[3*s.w*y : 3*s.w*(y+1)]
		for x := range r {
			px := row[3*x : 3*x+3 : 3*x+3]
			r[x], g[x], b[x] = px[0], px[1], px[2]
		}
	}
}

// bytes is an upper bound on the memory the source holds, counting the
// RGB copy RGB may still make.
func (s *Source) bytes() int64 {
	n := int64(3 * s.w * s.h)
	switch {
	case s.ycc != nil:
		n += int64(len(s.ycc.Y) + len(s.ycc.Cb) + len(s.ycc.Cr))
	case s.gray != nil:
		n += int64(len(s.gray.Pix))
	}
	return n
}
