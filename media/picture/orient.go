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
	// The stored pixel shown at output (x, y) is s0 + x·sx + y·sy.
	var s0, sx, sy int
	switch o {
	case 2:
		s0, sx, sy = w-1, -1, w
	case 3:
		s0, sx, sy = (h-1)*w+w-1, -1, -w
	case 4:
		s0, sx, sy = (h-1)*w, 1, -w
	case 5:
		s0, sx, sy = 0, w, 1
	case 6:
		s0, sx, sy = (h-1)*w, -w, 1
	case 7:
		s0, sx, sy = (h-1)*w+w-1, -w, -1
	case 8:
		s0, sx, sy = w-1, w, -1
	}
	// 32×32 tiles keep the stored rows a transpose reads in cache.
	const tile = 32
	parallelBands(oh, tile, func(b0, b1 int) {
		for y0 := b0; y0 < b1; y0 += tile {
			y1 := min(y0+tile, b1)
			for x0 := 0; x0 < ow; x0 += tile {
				x1 := min(x0+tile, ow)
				for y := y0; y < y1; y++ {
					d := out.Pix[3*(y*ow+x0) : 3*(y*ow+x1)]
					s := s0 + x0*sx + y*sy
					for i := 0; i < len(d); i += 3 {
						p := m.Pix[3*s : 3*s+3 : 3*s+3]
						d[i], d[i+1], d[i+2] = p[0], p[1], p[2]
						s += sx
					}
				}
			}
		}
	})
	return out
}
