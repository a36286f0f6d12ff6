package jpeg

import "image"

// rangeLimit clamps v+384 to 0..255 (libjpeg's range_limit table).
var rangeLimit = func() (t [1024]uint8) {
	for i := range t {
		t[i] = clip(int32(i - 384))
	}
	return t
}()

// RowPlanes converts row y of m, a JPEG's planes whose Rect starts at (0, 0),
// to RGB the way libjpeg does (fancy upsampling, YCC tables; the same result
// as packedRow) and writes it as three planes r, g and b (len w each),
// the form the resampler reads. Chroma is upsampled into b (Cb) and g (Cr)
// first, then converted in place.
func RowPlanes(m *image.YCbCr, y int, r, g, b []uint8) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	yrow := m.Y[y*m.YStride:][:w]
	cw, ch := chromaSize(m.SubsampleRatio, w, h)
	switch {
	case m.SubsampleRatio == image.YCbCrSubsampleRatio444:
		copy(b, m.Cb[y*m.CStride:][:w])
		copy(g, m.Cr[y*m.CStride:][:w])
	case m.SubsampleRatio == image.YCbCrSubsampleRatio422 && cw > 2:
		cb, cr := m.Cb[y*m.CStride:][:cw], m.Cr[y*m.CStride:][:cw]
		fancyUpsample(b, cb, cb, h2v1Bias)
		fancyUpsample(g, cr, cr, h2v1Bias)
	case m.SubsampleRatio == image.YCbCrSubsampleRatio420 && cw > 2:
		near := (y / 2) * m.CStride
		far := max(y/2-1, 0) * m.CStride
		if y%2 == 1 {
			far = min(y/2+1, ch-1) * m.CStride
		}
		fancyUpsample(b, m.Cb[near:][:cw], m.Cb[far:][:cw], h2v2Bias)
		fancyUpsample(g, m.Cr[near:][:cw], m.Cr[far:][:cw], h2v2Bias)
	default:
		row := make([]uint8, 3*w)
		packedRow(m, y, row)
		for x := range r {
			r[x], g[x], b[x] = row[3*x], row[3*x+1], row[3*x+2]
		}
		return
	}
	yccPlanes(yrow, b, g, r, g, b)
}

// yccPlanes converts full-width samples to RGB planes; cb and cr may alias
// the outputs, as each pixel is read before it is written.
func yccPlanes(yr, cb, cr, r, g, b []uint8) {
	n := len(yr)
	cb, cr, r, g, b = cb[:n], cr[:n], r[:n], g[:n], b[:n]
	done := 0
	if hasColorKernels && n >= 16 {
		done = n &^ 15
		ycc16(&yr[0], &cb[0], &cr[0], &r[0], &g[0], &b[0], done/16)
	}
	for x := done; x < n; x++ {
		yv := yr[x]
		yy := int32(yv) + 384
		u, v := cb[x], cr[x]
		r[x] = rangeLimit[(yy+yccR[v])&1023]
		g[x] = rangeLimit[(yy+(yccGCb[u]+yccGCr[v])>>16)&1023]
		b[x] = rangeLimit[(yy+yccB[u])&1023]
	}
}

// Fancy upsampling doubles a chroma row: each output is 3/4 its own column
// and 1/4 the neighbour on its side, the image's edge columns standing in for
// their missing neighbours. h2v2 first mixes 3/4 of the nearer chroma row
// with 1/4 of the other (column sums 3·near + far, scale 16); h2v1 uses
// far = near (scale 16 as well). The biases are libjpeg's alternating
// roundings of even and odd outputs.
type fancyBias struct{ even, odd int32 }

var (
	h2v2Bias = fancyBias{8, 7}
	h2v1Bias = fancyBias{4, 8} // (12·this + 4·prev + 4) >> 4 = (3·this + prev + 1) >> 2
)

// fancyUpsample writes len(out) upsampled samples from chroma row near
// (and far), len(near) > 2.
func fancyUpsample(out, near, far []uint8, bias fancyBias) {
	n := len(near)
	far = far[:n]
	_ = out[2*n-2] // the kernel writes up to out[32·blocks+1] ≤ out[2n-3]
	done := 1
	if hasColorKernels && n >= 18 {
		blocks := (n - 2) / 16 // columns 1..16·blocks, which read up to column 16·blocks+1
		upsample16(&out[2], &near[0], &far[0], blocks, int16(bias.even), int16(bias.odd))
		done = 1 + 16*blocks
	}
	fancyCols(out, near, far, 0, 1, bias)
	fancyCols(out, near, far, done, n, bias)
}

// fancyCols writes the two outputs of each chroma column in [c0, c1) (the
// last column's second one only if out has room).
func fancyCols(out, near, far []uint8, c0, c1 int, bias fancyBias) {
	n, w := len(near), len(out)
	if c0 >= c1 {
		return
	}
	far = far[:n]
	this := 3*int32(near[c0]) + int32(far[c0])
	prev := this
	if c0 > 0 {
		prev = 3*int32(near[c0-1]) + int32(far[c0-1])
	}
	// Interior columns have both neighbours; the last column stands in for its right one.
	last := min(c1, n-1)
	for i := c0; i < last; i++ {
		next := 3*int32(near[i+1]) + int32(far[i+1])
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0] = uint8((3*this + prev + bias.even) >> 4)
		o[1] = uint8((3*this + next + bias.odd) >> 4)
		prev, this = this, next
	}
	if c1 == n {
		out[2*n-2] = uint8((3*this + prev + bias.even) >> 4)
		if 2*n-1 < w {
			out[2*n-1] = uint8((4*this + bias.odd) >> 4)
		}
	}
}
