package picture

import "image"

// Planar YCbCr→RGB rows for the resampler: libjpeg's fancy upsampling and
// YCC tables (the same results as jpegRow), written as three planes.

// rangeLimit clamps v+384 to 0..255 (libjpeg's range_limit table).
var rangeLimit = func() (t [1024]uint8) {
	for i := range t {
		t[i] = clip(int32(i - 384))
	}
	return t
}()

// yccRowPlanes converts output row y of m into r, g and b (len w each).
// Chroma is upsampled into b (Cb) and g (Cr) first, then converted in place.
func yccRowPlanes(m *image.YCbCr, y int, r, g, b []uint8) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	yrow := m.Y[y*m.YStride:][:w]
	cw, ch := chromaSize(m.SubsampleRatio, w, h)
	switch {
	case m.SubsampleRatio == image.YCbCrSubsampleRatio444:
		copy(b, m.Cb[y*m.CStride:][:w])
		copy(g, m.Cr[y*m.CStride:][:w])
	case m.SubsampleRatio == image.YCbCrSubsampleRatio422 && cw > 2:
		fancyH2V1(b, m.Cb[y*m.CStride:][:cw])
		fancyH2V1(g, m.Cr[y*m.CStride:][:cw])
	case m.SubsampleRatio == image.YCbCrSubsampleRatio420 && cw > 2:
		near := (y / 2) * m.CStride
		far := max(y/2-1, 0) * m.CStride
		if y%2 == 1 {
			far = min(y/2+1, ch-1) * m.CStride
		}
		fancyH2V2(b, m.Cb[near:][:cw], m.Cb[far:][:cw])
		fancyH2V2(g, m.Cr[near:][:cw], m.Cr[far:][:cw])
	default:
		row := make([]uint8, 3*w)
		jpegRow(m, y, row)
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
	for x, yv := range yr {
		yy := int32(yv) + 384
		u, v := cb[x], cr[x]
		r[x] = rangeLimit[(yy+yccR[v])&1023]
		g[x] = rangeLimit[(yy+(yccGCb[u]+yccGCr[v])>>16)&1023]
		b[x] = rangeLimit[(yy+yccB[u])&1023]
	}
}

// fancyH2V1 doubles a chroma row (cw > 2) with libjpeg's triangle filter
// (3/4 nearer sample, 1/4 the other, rounding alternately down and up),
// writing len(out) samples.
func fancyH2V1(out, in []uint8) {
	n, w := len(in), len(out)
	out = out[:2*n-1]
	prev, this := int32(in[0]), int32(in[0])
	for i := 0; i < n-1; i++ {
		next := int32(in[i+1])
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0] = uint8((3*this + prev + 1) >> 2)
		o[1] = uint8((3*this + next + 2) >> 2)
		prev, this = this, next
	}
	out[2*n-2] = uint8((3*this + prev + 1) >> 2)
	if 2*n-1 < w {
		out[:2*n][2*n-1] = uint8(this)
	}
}

// fancyH2V2 is libjpeg's h2v2 fancy upsampling of one output row: column
// sums 3·near + far, then 3:1 across columns with +8/+7 rounding; writes
// len(out) samples (cw > 2). The image's edge columns weigh themselves 4:0.
func fancyH2V2(out, near, far []uint8) {
	n := len(near)
	w := len(out)
	far = far[:n]
	out = out[:2*n-1]
	this := 3*int32(near[0]) + int32(far[0])
	prev := this
	for i := 0; i < n-1; i++ {
		next := 3*int32(near[i+1]) + int32(far[i+1])
		o := out[2*i : 2*i+2 : 2*i+2]
		o[0] = uint8((3*this + prev + 8) >> 4)
		o[1] = uint8((3*this + next + 7) >> 4)
		prev, this = this, next
	}
	out[2*n-2] = uint8((3*this + prev + 8) >> 4)
	if 2*n-1 < w {
		out[:2*n][2*n-1] = uint8((4*this + 7) >> 4)
	}
}
