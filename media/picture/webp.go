package picture

import "image"

// webpRow converts VP8's limited-range BT.601 YUV (4:2:0) with libwebp's
// fixed-point formulas (dsp/yuv.h); chroma is linearly interpolated.
func webpRow(m *image.YCbCr, y int, dst []uint8) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	yrow := m.Y[m.YOffset(m.Rect.Min.X, m.Rect.Min.Y+y):][:w]
	if m.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		for x, yv := range yrow {
			i := m.COffset(m.Rect.Min.X+x, m.Rect.Min.Y+y)
			webpPixel(dst[3*x:3*x+3], int(yv), int(m.Cb[i]), int(m.Cr[i]))
		}
		return
	}
	// libwebp's "fancy" upsampler: 9/16, 3/16, 3/16, 1/16 of the four nearest samples.
	cw, ch := (w+1)/2, (h+1)/2
	r := y / 2
	fr := max(r-1, 0)
	if y%2 == 1 {
		fr = min(r+1, ch-1)
	}
	for x, yv := range yrow {
		c := x / 2
		fc := max(c-1, 0)
		if x%2 == 1 {
			fc = min(c+1, cw-1)
		}
		u := (9*int(m.Cb[r*m.CStride+c]) + 3*int(m.Cb[r*m.CStride+fc]) + 3*int(m.Cb[fr*m.CStride+c]) + int(m.Cb[fr*m.CStride+fc]) + 8) >> 4
		v := (9*int(m.Cr[r*m.CStride+c]) + 3*int(m.Cr[r*m.CStride+fc]) + 3*int(m.Cr[fr*m.CStride+c]) + int(m.Cr[fr*m.CStride+fc]) + 8) >> 4
		webpPixel(dst[3*x:3*x+3], int(yv), u, v)
	}
}

func webpPixel(dst []uint8, y, u, v int) {
	mh := func(a, c int) int { return (a * c) >> 8 }
	clip14 := func(x int) uint8 {
		if x&^((256<<6)-1) == 0 {
			return uint8(x >> 6)
		}
		if x < 0 {
			return 0
		}
		return 255
	}
	dst[0] = clip14(mh(y, 19077) + mh(v, 26149) - 14234)
	dst[1] = clip14(mh(y, 19077) - mh(u, 6419) - mh(v, 13320) + 8708)
	dst[2] = clip14(mh(y, 19077) + mh(u, 33050) - 17685)
}
