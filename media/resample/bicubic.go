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

// Rows is an image read one row at a time, so a decoder's colour conversion
// can feed the horizontal pass without a full-size RGB copy.
type Rows interface {
	Size() (w, h int)
	// PackedRow writes row y as rg[x] = R | G<<32 and b[x] = B (len(rg) = len(b) = w).
	PackedRow(y int, rg []int64, b []int32)
}

// packedRGB serves rows of a packed RGB buffer.
type packedRGB struct {
	pix  []uint8
	w, h int
}

func (p packedRGB) Size() (int, int) { return p.w, p.h }

func (p packedRGB) PackedRow(y int, rg []int64, b []int32) {
	row := p.pix[3*p.w*y : 3*p.w*(y+1)]
	rg, b = rg[:p.w], b[:p.w]
	for x := range rg {
		px := row[3*x : 3*x+3 : 3*x+3]
		rg[x] = int64(px[0]) | int64(px[1])<<32
		b[x] = int32(px[2])
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

// Bicubic resizes src to dw×dh exactly as Pillow's BICUBIC resize does.
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
	// Horizontal pass (or a plain copy when the width is unchanged) over the
	// rows the vertical pass reads; the vertical bounds shift onto them.
	for i := 0; i < dh; i++ {
		vert.bounds[2*i] -= first
	}
	ih := last - first
	img := make([]uint8, 3*dw*ih)
	var horiz coeffs
	if dw != w {
		horiz = precompute(w, dw)
	}
	parallel(ih, func(y0, y1 int) {
		rg, b := make([]int64, w), make([]int32, w)
		for y := y0; y < y1; y++ {
			src.PackedRow(y+first, rg, b)
			dst := img[3*dw*y : 3*dw*(y+1)]
			if dw == w {
				unpack(dst, rg, b)
			} else {
				horizontalRow(dst, rg, b, &horiz)
			}
		}
	})
	if dh == h {
		return img, nil
	}
	out := make([]uint8, 3*dw*dh)
	parallel(dh, func(y0, y1 int) {
		acc := make([]int32, 3*dw)
		for y := y0; y < y1; y++ {
			verticalRow(out[3*dw*y:3*dw*(y+1)], img, dw, y, &vert, acc)
		}
	})
	return out, nil
}

// dot is the tap loop, kept apart so its accumulators stay in registers.
//
//go:noinline
func dot(rg []int64, b []int32, k []int32) (int64, int32) {
	rg, b = rg[:len(k)], b[:len(k)]
	accRG, accB := int64(half)|int64(half)<<32, int32(half)
	i := 0
	for ; i+1 < len(k); i += 2 {
		k0, k1 := k[i], k[i+1]
		accRG += rg[i]*int64(k0) + rg[i+1]*int64(k1)
		accB += b[i]*k0 + b[i+1]*k1
	}
	if i < len(k) {
		accRG += rg[i] * int64(k[i])
		accB += b[i] * k[i]
	}
	return accRG, accB
}

func unpack(dst []uint8, rg []int64, b []int32) {
	for x, v := range rg {
		dst[3*x], dst[3*x+1], dst[3*x+2] = uint8(v), uint8(v>>32), uint8(b[x])
	}
}

// horizontalRow convolves one row. R and G share one int64 multiply-add
// (lanes 32 bits apart; the low lane's sign borrow is undone at the end),
// which is exact because each lane's sums stay within int32.
func horizontalRow(dst []uint8, rg []int64, b []int32, c *coeffs) {
	n := len(dst) / 3
	for xx := 0; xx < n; xx++ {
		xmin, cnt := c.bounds[2*xx], c.bounds[2*xx+1]
		k := c.k[xx*c.ksize : xx*c.ksize+cnt]
		accRG, accB := dot(rg[xmin:xmin+cnt], b[xmin:xmin+cnt], k)
		r := int32(accRG)
		g := int32((accRG - int64(r)) >> 32)
		d := dst[3*xx : 3*xx+3 : 3*xx+3]
		d[0], d[1], d[2] = clip8(r), clip8(g), clip8(accB)
	}
}

// verticalRow accumulates whole input rows; integer sums make the order irrelevant.
func verticalRow(dst, img []uint8, w, yy int, c *coeffs, acc []int32) {
	ymin, n := c.bounds[2*yy], c.bounds[2*yy+1]
	k := c.k[yy*c.ksize : yy*c.ksize+n]
	for i := range acc {
		acc[i] = half
	}
	stride := 3 * w
	for j, kv := range k {
		row := img[(ymin+j)*stride : (ymin+j+1)*stride]
		row = row[:len(acc)]
		for i, p := range row {
			acc[i] += int32(p) * kv
		}
	}
	for i, v := range acc {
		dst[i] = clip8(v)
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
