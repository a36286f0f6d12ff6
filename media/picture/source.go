package picture

import (
	"image"
	"sync"
)

// Source is a decoded image whose RGB conversion may still be pending. It
// serves rows to the resampler (resample.Rows) and materialises on demand.
type Source struct {
	w, h int
	ycc  *image.YCbCr // JPEG planes, converted per row (orientation 1 only)
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
		if s.rgb == nil {
			s.rgb = toRGB(s.ycc, false)
		}
	})
	return s.rgb
}

// PackedRow writes row y as rg[x] = R | G<<32, b[x] = B.
func (s *Source) PackedRow(y int, rg []int64, b []int32) {
	if s.rgb == nil && s.ycc.SubsampleRatio == image.YCbCrSubsampleRatio420 && s.w > 4 {
		packed420(s.ycc, y, rg, b)
		return
	}
	var row []uint8
	if s.rgb != nil {
		row = s.rgb.Pix[3*s.w*y : 3*s.w*(y+1)]
	} else {
		row = make([]uint8, 3*s.w)
		jpegRow(s.ycc, y, row)
	}
	rg, b = rg[:s.w], b[:s.w]
	for x := range rg {
		px := row[3*x : 3*x+3 : 3*x+3]
		rg[x] = int64(px[0]) | int64(px[1])<<32
		b[x] = int32(px[2])
	}
}

// rangeLimit clamps v+384 to 0..255 (libjpeg's range_limit table).
var rangeLimit = func() (t [1024]uint8) {
	for i := range t {
		t[i] = clip(int32(i - 384))
	}
	return t
}()

// packed420 converts one row of 4:2:0 YCbCr with libjpeg's h2v2 fancy
// upsampling (same results as jpegRow), streaming the chroma column sums.
func packed420(m *image.YCbCr, y int, rg []int64, b []int32) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	cw, ch := (w+1)/2, (h+1)/2
	r := y / 2
	fr := max(r-1, 0)
	if y%2 == 1 {
		fr = min(r+1, ch-1)
	}
	yrow := m.Y[y*m.YStride:][:w]
	nb, fb := m.Cb[r*m.CStride:][:cw], m.Cb[fr*m.CStride:][:cw]
	nr, frr := m.Cr[r*m.CStride:][:cw], m.Cr[fr*m.CStride:][:cw]
	rg, b = rg[:w], b[:w]
	// Column sums (3·near + far) slide along: last, this, next.
	thisB, thisR := 3*int32(nb[0])+int32(fb[0]), 3*int32(nr[0])+int32(frr[0])
	lastB, lastR := thisB, thisR
	for c := 0; c < cw; c++ {
		nextB, nextR := thisB, thisR
		if c+1 < cw {
			nextB, nextR = 3*int32(nb[c+1])+int32(fb[c+1]), 3*int32(nr[c+1])+int32(frr[c+1])
		}
		// Even pixel leans on the left column, odd on the right; the image edges
		// use the column itself (libjpeg's 4·sum special cases).
		x := 2 * c
		cb, cr := uint8((thisB*3+lastB+8)>>4), uint8((thisR*3+lastR+8)>>4)
		if c == 0 {
			cb, cr = uint8((thisB*4+8)>>4), uint8((thisR*4+8)>>4)
		}
		rg[x], b[x] = yccPacked(yrow[x], cb, cr)
		if x+1 < w {
			cb, cr = uint8((thisB*3+nextB+7)>>4), uint8((thisR*3+nextR+7)>>4)
			if c == cw-1 {
				cb, cr = uint8((thisB*4+7)>>4), uint8((thisR*4+7)>>4)
			}
			rg[x+1], b[x+1] = yccPacked(yrow[x+1], cb, cr)
		}
		lastB, lastR, thisB, thisR = thisB, thisR, nextB, nextR
	}
}

// yccPacked is yccPixel producing the resampler's packed form.
func yccPacked(y, cb, cr uint8) (int64, int32) {
	yy := int32(y) + 384
	r := rangeLimit[(yy+yccR[cr])&1023]
	g := rangeLimit[(yy+(yccGCb[cb]+yccGCr[cr])>>16)&1023]
	bl := rangeLimit[(yy+yccB[cb])&1023]
	return int64(r) | int64(g)<<32, int32(bl)
}
