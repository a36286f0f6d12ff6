package jpeg

import "image"

// libjpeg's YCC->RGB tables (jdcolor.c): 16-bit fixed point, round half up.
var yccR, yccB, yccGCb, yccGCr [256]int32

func init() {
	fix := func(x float64) int32 { return int32(x*65536 + 0.5) }
	for i := range 256 {
		x := int32(i - 128)
		yccR[i] = (fix(1.40200)*x + 1<<15) >> 16
		yccB[i] = (fix(1.77200)*x + 1<<15) >> 16
		yccGCr[i] = -fix(0.71414) * x
		yccGCb[i] = -fix(0.34414)*x + 1<<15
	}
}

func yccPixel(dst []uint8, y, cb, cr uint8) {
	yy := int32(y)
	dst[0] = clip(yy + yccR[cr])
	dst[1] = clip(yy + (yccGCb[cb]+yccGCr[cr])>>16)
	dst[2] = clip(yy + yccB[cb])
}

func clip(v int32) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// packedRow converts output row y, upsampling chroma like libjpeg-turbo's
// h2v2/h2v1/h1v2 "fancy" upsamplers (triangle filter, 3:1 weights).
func packedRow(m *image.YCbCr, y int, dst []uint8) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	yrow := m.Y[m.YOffset(m.Rect.Min.X, m.Rect.Min.Y+y)-0:][:w]
	cw, ch := chromaSize(m.SubsampleRatio, w, h)
	cbuf := [2][]uint8{make([]uint8, 4*cw+4), make([]uint8, 4*cw+4)} // ≥ w for every ratio
	planes := [2][]uint8{m.Cb, m.Cr}
	for p, plane := range planes {
		out := cbuf[p]
		switch m.SubsampleRatio {
		case image.YCbCrSubsampleRatio444:
			copy(out, plane[y*m.CStride:][:w])
		case image.YCbCrSubsampleRatio420:
			r := y / 2
			near := plane[r*m.CStride:][:cw]
			if cw <= 2 {
				replicate(out, near, 2)
				break
			}
			fr := max(r-1, 0)
			if y%2 == 1 {
				fr = min(r+1, ch-1)
			}
			far := plane[fr*m.CStride:][:cw]
			h2v2Fancy(out, near, far)
		case image.YCbCrSubsampleRatio422:
			row := plane[y*m.CStride:][:cw]
			if cw <= 2 {
				replicate(out, row, 2)
				break
			}
			h2v1Fancy(out, row)
		case image.YCbCrSubsampleRatio440:
			r := y / 2
			near := plane[r*m.CStride:][:cw]
			fr, bias := max(r-1, 0), 1
			if y%2 == 1 {
				fr, bias = min(r+1, ch-1), 2
			}
			far := plane[fr*m.CStride:][:cw]
			for i := range cw {
				out[i] = uint8((3*int(near[i]) + int(far[i]) + bias) >> 2)
			}
		case image.YCbCrSubsampleRatio411:
			replicate(out, plane[y*m.CStride:][:cw], 4)
		case image.YCbCrSubsampleRatio410:
			replicate(out, plane[(y/2)*m.CStride:][:cw], 4)
		}
	}
	cb, cr := cbuf[0][:w], cbuf[1][:w]
	for x, yv := range yrow {
		yccPixel(dst[3*x:3*x+3], yv, cb[x], cr[x])
	}
}

func chromaSize(r image.YCbCrSubsampleRatio, w, h int) (int, int) {
	switch r {
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	case image.YCbCrSubsampleRatio411:
		return (w + 3) / 4, h
	case image.YCbCrSubsampleRatio410:
		return (w + 3) / 4, (h + 1) / 2
	}
	return w, h
}

func replicate(out, in []uint8, f int) {
	for i, v := range in {
		for j := range f {
			if k := i*f + j; k < len(out) {
				out[k] = v
			}
		}
	}
}

// h2v2Fancy: colsum = 3*near + far per chroma column, then 3:1 horizontally
// with libjpeg's alternating +8/+7 rounding.
func h2v2Fancy(out, near, far []uint8) {
	n := len(near)
	sum := func(i int) int { return 3*int(near[i]) + int(far[i]) }
	this, next := sum(0), sum(1)
	out[0] = uint8((this*4 + 8) >> 4)
	out[1] = uint8((this*3 + next + 7) >> 4)
	last := this
	this = next
	for i := 1; i < n-1; i++ {
		next = sum(i + 1)
		out[2*i] = uint8((this*3 + last + 8) >> 4)
		out[2*i+1] = uint8((this*3 + next + 7) >> 4)
		last, this = this, next
	}
	out[2*n-2] = uint8((this*3 + last + 8) >> 4)
	out[2*n-1] = uint8((this*4 + 7) >> 4)
}

func h2v1Fancy(out, in []uint8) {
	n := len(in)
	out[0] = in[0]
	out[1] = uint8((int(in[0])*3 + int(in[1]) + 2) >> 2)
	for i := 1; i < n-1; i++ {
		v := int(in[i]) * 3
		out[2*i] = uint8((v + int(in[i-1]) + 1) >> 2)
		out[2*i+1] = uint8((v + int(in[i+1]) + 2) >> 2)
	}
	out[2*n-2] = uint8((int(in[n-1])*3 + int(in[n-2]) + 1) >> 2)
	out[2*n-1] = in[n-1]
}
