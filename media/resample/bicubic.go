// Package resample ports Pillow's antialiased bicubic resize
// (Image.resize(size, Image.BICUBIC), libImaging/Resample.c, Pillow 9.4) to Go.
//
//   - Keys cubic, a = -0.5, support 2 scaled by the downscale factor (antialias).
//   - Coefficients in float64, normalised, then 22-bit fixed point rounded half away from zero.
//   - Horizontal pass first over only the rows the vertical pass reads, then vertical;
//     each pass rounds (+2^21) and clamps to uint8, so the output is bit-exact with Pillow.
//   - Explicit float64 conversions keep Go from fusing multiply-adds (arm64), so every
//     platform computes Pillow-on-x86's coefficients.
package resample

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

const (
	precisionBits = 32 - 8 - 2
	half          = 1 << (precisionBits - 1)
)

// cubic is Pillow's bicubic_filter with a = -0.5.
func cubic(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		p := float64((a+2)*x) - (a + 3)
		return float64(float64(p*x)*x) + 1
	}
	if x < 2 {
		p := float64(float64((x-5)*x) + 8)
		return float64(float64(p*x)-4) * a
	}
	return 0
}

// coeffs holds one pass's kernels: for output i, taps start at bounds[2i] in
// the input and number bounds[2i+1]; weights are k[i*ksize:][:bounds[2i+1]].
type coeffs struct {
	ksize  int
	bounds []int
	k      []int32
}

// precompute ports precompute_coeffs + normalize_coeffs_8bpc for box (0, inSize).
func precompute(inSize, outSize int) coeffs {
	scale := float64(inSize) / float64(outSize)
	filterscale := max(scale, 1.0)
	support := 2.0 * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := coeffs{ksize: ksize, bounds: make([]int, 2*outSize), k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	ss := 1.0 / filterscale
	for xx := 0; xx < outSize; xx++ {
		center := float64((float64(xx) + 0.5) * scale)
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), inSize) - xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			v := cubic(float64((float64(x+xmin) - center + 0.5) * ss))
			w[x] = v
			ww += v
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				w[x] /= ww
			}
			if w[x] < 0 {
				c.k[xx*ksize+x] = int32(-0.5 + w[x]*(1<<precisionBits))
			} else {
				c.k[xx*ksize+x] = int32(0.5 + w[x]*(1<<precisionBits))
			}
		}
		c.bounds[2*xx], c.bounds[2*xx+1] = xmin, xmax
	}
	return c
}

func clip8(v int32) uint8 {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// Rows is an image read one row at a time as three planes, so a decoder's
// colour conversion can feed the horizontal pass without a full-size RGB copy.
// Row may be called from several goroutines at once.
type Rows interface {
	Size() (w, h int)
	// Row writes row y's red, green and blue samples to r, g and b (len w each).
	Row(y int, r, g, b []uint8)
}

// packedRGB serves rows of a packed RGB buffer.
type packedRGB struct {
	pix  []uint8
	w, h int
}

// Size is the image size.
func (p packedRGB) Size() (int, int) { return p.w, p.h }

// Row splits row y into its three planes.
func (p packedRGB) Row(y int, r, g, b []uint8) {
	row := p.pix[3*p.w*y : 3*p.w*(y+1)]
	r, g, b = r[:p.w], g[:p.w], b[:p.w]
	for x := range r {
		px := row[3*x : 3*x+3 : 3*x+3]
		r[x], g[x], b[x] = px[0], px[1], px[2]
	}
}

// BicubicRGB resizes src (w×h, 3 bytes per pixel, rows packed) to dw×dh exactly
// as Pillow's BICUBIC resize does, using up to GOMAXPROCS goroutines.
func BicubicRGB(src []uint8, w, h, dw, dh int) ([]uint8, error) {
	if w <= 0 || h <= 0 || len(src) < 3*w*h {
		return nil, fmt.Errorf("resample: bad source %dx%d (%d bytes)", w, h, len(src))
	}
	if w == dw && h == dh {
		return append([]uint8(nil), src[:3*w*h]...), nil
	}
	return Bicubic(packedRGB{pix: src, w: w, h: h}, dw, dh)
}

// Bicubic resizes src to dw×dh exactly as Pillow's BICUBIC resize does:
// the horizontal pass over the rows the vertical pass reads, then the
// vertical pass, on planar rows (R, G, B side by side, each padded to
// planeStride(dw)), interleaved at the end.
func Bicubic(src Rows, dw, dh int) ([]uint8, error) {
	w, h := src.Size()
	if w <= 0 || h <= 0 || dw <= 0 || dh <= 0 {
		return nil, fmt.Errorf("resample: bad sizes %dx%d -> %dx%d", w, h, dw, dh)
	}
	vert := precompute(h, dh)
	first := vert.bounds[0]
	last := vert.bounds[2*dh-2] + vert.bounds[2*dh-1]
	if dh == h { // no vertical pass: every row is needed as is
		first, last = 0, h
	}
	for i := 0; i < dh; i++ {
		vert.bounds[2*i] -= first
	}
	ih := last - first
	ps := planeStride(dw)
	img := make([]uint8, 3*ps*ih)
	var horiz *horizontal
	if dw != w {
		horiz = newHorizontal(w, dw)
	}
	parallel(ih, func(y0, y1 int) {
		pad := 0
		if horiz != nil {
			pad = horiz.pad
		}
		r, g, b := make([]uint8, w+pad), make([]uint8, w+pad), make([]uint8, w+pad)
		for y := y0; y < y1; y++ {
			src.Row(y+first, r[:w], g[:w], b[:w])
			dst := img[3*ps*y:]
			out := [3][]uint8{dst[:ps], dst[ps:][:ps], dst[2*ps:][:ps]}
			if horiz == nil {
				copy(out[0], r[:w])
				copy(out[1], g[:w])
				copy(out[2], b[:w])
			} else {
				horiz.row(out, [3][]uint8{r, g, b})
			}
		}
	})
	out := make([]uint8, 3*dw*dh)
	if dh == h {
		parallel(dh, func(y0, y1 int) {
			for y := y0; y < y1; y++ {
				interleave(out[3*dw*y:][:3*dw], img[3*ps*y:], ps)
			}
		})
		return out, nil
	}
	parallel(dh, func(y0, y1 int) {
		tmp := make([]uint8, 3*ps)
		acc := make([]int32, 3*ps)
		for y := y0; y < y1; y++ {
			ymin, n := vert.bounds[2*y], vert.bounds[2*y+1]
			verticalRow(tmp, img[3*ps*ymin:], 3*ps, vert.k[y*vert.ksize:][:n], acc)
			interleave(out[3*dw*y:][:3*dw], tmp, ps)
		}
	})
	return out, nil
}

// planeStride is the padded width of one plane in the intermediate rows.
func planeStride(dw int) int { return (dw + 31) &^ 31 }

// interleave packs the first len(dst)/3 samples of three planes ps apart into RGB.
func interleave(dst, planes []uint8, ps int) {
	n := len(dst) / 3
	r, g, b := planes[:n], planes[ps:][:n], planes[2*ps:][:n]
	for x := range r {
		d := dst[3*x : 3*x+3 : 3*x+3]
		d[0], d[1], d[2] = r[x], g[x], b[x]
	}
}

// parallel splits [0, n) into contiguous bands, one per available CPU.
func parallel(n int, fn func(y0, y1 int)) {
	workers := min(runtime.GOMAXPROCS(0), max(n/16, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		y0, y1 := n*i/workers, n*(i+1)/workers
		wg.Add(1)
		go func() { defer wg.Done(); fn(y0, y1) }()
	}
	wg.Wait()
}
