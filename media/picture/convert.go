package picture

import (
	"image"
	"image/color"
	"perch/media/picture/jpeg"
	"runtime"
	"sync"
)

// toRGB converts a decoded image to packed RGB the way Pillow's
// convert("RGB") does after its own decoders:
//   - alpha is dropped, not composited (colour values kept as stored);
//   - palette images are looked up; gray is replicated;
//   - 16-bit samples keep their high byte (Pillow's ";16B" raw modes). Deliberate
//     difference: Pillow opens 16-bit gray PNGs as mode "I" and convert("RGB")
//     clips them to 0..255 (an all-white photo); we keep the high byte instead;
//   - JPEG YCbCr uses libjpeg's fancy upsampling and YCC tables (what Pillow's
//     libjpeg-turbo does); CMYK uses Pillow's cmyk2rgb.
func toRGB(m image.Image, webpYUV bool) *RGB {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	out := &RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)}
	rows := func(fn func(y int, dst []uint8)) {
		parallelRows(h, func(y int) { fn(y, out.Pix[3*w*y:3*w*(y+1)]) })
	}
	switch m := m.(type) {
	case *image.YCbCr:
		if webpYUV {
			rows(func(y int, dst []uint8) { webpRow(m, y, dst) })
		} else {
			jpegRGB(m, out)
		}
	case *image.NYCbCrA:
		rows(func(y int, dst []uint8) { webpRow(&m.YCbCr, y, dst) })
	case *image.NRGBA:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:4*w]
			for x := 0; x < w; x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
			}
		})
	case *image.RGBA:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:4*w]
			for x := 0; x < w; x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = unpremul(src[4*x], src[4*x+3]), unpremul(src[4*x+1], src[4*x+3]), unpremul(src[4*x+2], src[4*x+3])
			}
		})
	case *image.NRGBA64:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:8*w]
			for x := 0; x < w; x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = src[8*x], src[8*x+2], src[8*x+4]
			}
		})
	case *image.RGBA64:
		rows(func(y int, dst []uint8) {
			for x := 0; x < w; x++ {
				c := m.RGBA64At(b.Min.X+x, b.Min.Y+y)
				nc := color.NRGBA64Model.Convert(c).(color.NRGBA64)
				dst[3*x], dst[3*x+1], dst[3*x+2] = uint8(nc.R>>8), uint8(nc.G>>8), uint8(nc.B>>8)
			}
		})
	case *image.Gray:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			for x, v := range src {
				dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
			}
		})
	case *image.Gray16:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:2*w]
			for x := 0; x < w; x++ {
				v := src[2*x]
				dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
			}
		})
	case *image.Paletted:
		var lut [256][3]uint8
		for i, c := range m.Palette {
			lut[i] = paletteRGB(c)
		}
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			for x, v := range src {
				dst[3*x], dst[3*x+1], dst[3*x+2] = lut[v][0], lut[v][1], lut[v][2]
			}
		})
	case *image.CMYK:
		rows(func(y int, dst []uint8) {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:4*w]
			for x := 0; x < w; x++ {
				nk := 255 - int(src[4*x+3])
				for c := 0; c < 3; c++ {
					dst[3*x+c] = clamp8(nk - muldiv255(int(src[4*x+c]), nk))
				}
			}
		})
	default:
		rows(func(y int, dst []uint8) {
			for x := 0; x < w; x++ {
				c := color.NRGBA64Model.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
				dst[3*x], dst[3*x+1], dst[3*x+2] = uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8)
			}
		})
	}
	return out
}

// paletteRGB returns a palette entry's stored colour (PNG tRNS entries are NRGBA).
func paletteRGB(c color.Color) [3]uint8 {
	if n, ok := c.(color.NRGBA); ok {
		return [3]uint8{n.R, n.G, n.B}
	}
	n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
	return [3]uint8{uint8(n.R >> 8), uint8(n.G >> 8), uint8(n.B >> 8)}
}

func unpremul(v, a uint8) uint8 {
	if a == 255 || a == 0 {
		return v
	}
	return uint8(min((int(v)*255+int(a)/2)/int(a), 255))
}

func muldiv255(a, b int) int {
	t := a*b + 128
	return ((t >> 8) + t) >> 8
}

func clamp8(v int) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// jpegRGB converts JPEG planes to out through the planar row converter.
func jpegRGB(m *image.YCbCr, out *RGB) {
	w := out.W
	parallelBands(out.H, 32, func(y0, y1 int) {
		r, g, b := make([]uint8, w), make([]uint8, w), make([]uint8, w)
		for y := y0; y < y1; y++ {
			jpeg.RowPlanes(m, y, r, g, b)
			dst := out.Pix[3*w*y : 3*w*(y+1)]
			for x := range r {
				d := dst[3*x : 3*x+3 : 3*x+3]
				d[0], d[1], d[2] = r[x], g[x], b[x]
			}
		}
	})
}

// parallelRows runs fn for every row, split into bands across the CPUs.
func parallelRows(h int, fn func(y int)) {
	parallelBands(h, 32, func(y0, y1 int) {
		for y := y0; y < y1; y++ {
			fn(y)
		}
	})
}

// parallelBands splits [0, h) into one band per CPU (bands of at least
// minRows) and runs fn on each.
func parallelBands(h, minRows int, fn func(y0, y1 int)) {
	workers := min(runtime.GOMAXPROCS(0), max(h/minRows, 1))
	if workers == 1 {
		fn(0, h)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		y0, y1 := h*i/workers, h*(i+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(y0, y1)
		}()
	}
	wg.Wait()
}
