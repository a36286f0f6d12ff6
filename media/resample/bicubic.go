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

// BicubicRGB resizes src (w×h, 3 bytes per pixel, rows packed) to dw×dh exactly
// as Pillow's BICUBIC resize does, using up to GOMAXPROCS goroutines.
func BicubicRGB(src []uint8, w, h, dw, dh int) ([]uint8, error) {
	if w <= 0 || h <= 0 || dw <= 0 || dh <= 0 || len(src) < 3*w*h {
		return nil, fmt.Errorf("resample: bad sizes %dx%d (%d bytes) -> %dx%d", w, h, len(src), dw, dh)
	}
	if w == dw && h == dh {
		return append([]uint8(nil), src[:3*w*h]...), nil
	}
	vert := precompute(h, dh)
	first := vert.bounds[0]
	last := vert.bounds[2*dh-2] + vert.bounds[2*dh-1]
	img, iw, ih := src, w, h
	if dw != w {
		horiz := precompute(w, dw)
		// Shift the vertical bounds onto the rows the horizontal pass produced.
		for i := 0; i < dh; i++ {
			vert.bounds[2*i] -= first
		}
		img, iw, ih = make([]uint8, 3*dw*(last-first)), dw, last-first
		tmp := img
		parallel(ih, func(y0, y1 int) {
			for y := y0; y < y1; y++ {
				horizontalRow(tmp[3*dw*y:3*dw*(y+1)], src[3*w*(y+first):3*w*(y+first+1)], &horiz)
			}
		})
	}
	if dh == h {
		return img, nil
	}
	out := make([]uint8, 3*iw*dh)
	parallel(dh, func(y0, y1 int) {
		acc := make([]int32, 3*iw)
		for y := y0; y < y1; y++ {
			verticalRow(out[3*iw*y:3*iw*(y+1)], img, iw, y, &vert, acc)
		}
	})
	return out, nil
}

func horizontalRow(dst, row []uint8, c *coeffs) {
	for xx := 0; 3*xx+2 < len(dst); xx++ {
		xmin, n := c.bounds[2*xx], c.bounds[2*xx+1]
		k := c.k[xx*c.ksize : xx*c.ksize+n]
		px := row[3*xmin : 3*(xmin+n)]
		s0, s1, s2 := int32(half), int32(half), int32(half)
		for i, kv := range k {
			p := px[3*i : 3*i+3 : 3*i+3]
			s0 += int32(p[0]) * kv
			s1 += int32(p[1]) * kv
			s2 += int32(p[2]) * kv
		}
		d := dst[3*xx : 3*xx+3 : 3*xx+3]
		d[0], d[1], d[2] = clip8(s0), clip8(s1), clip8(s2)
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
