package picture

// Orient returns m turned upright for EXIF orientation o (Pillow's
// ImageOps.exif_transpose: 2 mirror, 3 rotate 180, 4 flip, 5 transpose,
// 6 rotate 90° clockwise, 7 transverse, 8 rotate 90° counter-clockwise).
func Orient(m *RGB, o int) *RGB {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.W, m.H
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := &RGB{W: ow, H: oh, Pix: make([]uint8, len(m.Pix))}
	// src maps an output pixel to the stored pixel it shows.
	src := func(x, y int) int {
		switch o {
		case 2:
			return y*w + (w - 1 - x)
		case 3:
			return (h-1-y)*w + (w - 1 - x)
		case 4:
			return (h-1-y)*w + x
		case 5:
			return x*w + y
		case 6:
			return (h-1-x)*w + y
		case 7:
			return (h-1-x)*w + (w - 1 - y)
		default: // 8
			return x*w + (w - 1 - y)
		}
	}
	parallelRows(oh, func(y int) {
		for x := 0; x < ow; x++ {
			s := 3 * src(x, y)
			d := 3 * (y*ow + x)
			out.Pix[d], out.Pix[d+1], out.Pix[d+2] = m.Pix[s], m.Pix[s+1], m.Pix[s+2]
		}
	})
	return out
}
