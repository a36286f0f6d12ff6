package logmel

import "math"

// realFFT computes |rfft(x)| for real x of length n (a power of two >= 8) with
// an n/2-point complex radix-2 FFT and the usual split step, in float64.
type realFFT struct {
	n, half int
	rev     []int
	stages  [][2][]float64 // per stage (size 8, 16, …): cos and sin of -2πk/size
	splitRe []float64      // cos, sin of -2πk/n
	splitIm []float64
}

func newRealFFT(n int) *realFFT {
	h := n / 2
	f := &realFFT{n: n, half: h, rev: make([]int, h), splitRe: make([]float64, h+1), splitIm: make([]float64, h+1)}
	bits := 0
	for 1<<bits < h {
		bits++
	}
	for i := range f.rev {
		r := 0
		for b := 0; b < bits; b++ {
			r |= (i >> b & 1) << (bits - 1 - b)
		}
		f.rev[i] = r
	}
	for size := 8; size <= h; size <<= 1 {
		c, s := make([]float64, size/2), make([]float64, size/2)
		for k := range c {
			a := -2 * math.Pi * float64(k) / float64(size)
			c[k], s[k] = math.Cos(a), math.Sin(a)
		}
		f.stages = append(f.stages, [2][]float64{c, s})
	}
	for k := range f.splitRe {
		a := -2 * math.Pi * float64(k) / float64(n)
		f.splitRe[k], f.splitIm[k] = math.Cos(a), math.Sin(a)
	}
	return f
}

// magnitude writes |X[k]|, k = 0..n/2, of the real sequence x (len n);
// re and im are scratch of length n/2.
func (f *realFFT) magnitude(x, out, re, im []float64) {
	h := f.half
	re, im, x = re[:h], im[:h], x[:2*h]
	for i, j := range f.rev {
		re[j], im[j] = x[2*i], x[2*i+1]
	}
	// Sizes 2 and 4 need no multiplications (twiddles 1 and -i).
	for s := 0; s+3 < h; s += 4 {
		r, m := re[s:s+4:s+4], im[s:s+4:s+4]
		r0, i0 := r[0]+r[1], m[0]+m[1]
		r1, i1 := r[0]-r[1], m[0]-m[1]
		r2, i2 := r[2]+r[3], m[2]+m[3]
		r3, i3 := r[2]-r[3], m[2]-m[3]
		r[0], m[0] = r0+r2, i0+i2
		r[2], m[2] = r0-r2, i0-i2
		r[1], m[1] = r1+i3, i1-r3 // (r3 + i·i3)·(-i) = i3 - i·r3
		r[3], m[3] = r1-i3, i1+r3
	}
	size := 8
	for _, st := range f.stages {
		half := size / 2
		wr, wi := st[0][:half], st[1][:half]
		for s := 0; s < h; s += size {
			ar, ai := re[s:s+half], im[s:s+half]
			br, bi := re[s+half:s+size], im[s+half:s+size]
			br, bi = br[:len(ar)], bi[:len(ar)]
			for k := range ar {
				tr := br[k]*wr[k] - bi[k]*wi[k]
				ti := br[k]*wi[k] + bi[k]*wr[k]
				br[k], bi[k] = ar[k]-tr, ai[k]-ti
				ar[k], ai[k] = ar[k]+tr, ai[k]+ti
			}
		}
		size <<= 1
	}
	// Split: X[k] = (Z[k] + conj Z[h-k])/2 - i·e^{-2πik/n}(Z[k] - conj Z[h-k])/2.
	out = out[:h+1]
	for k := range out {
		a, b := k&(h-1), (h-k)&(h-1)
		zr, zi := re[a], im[a]
		cr, ci := re[b], -im[b]
		er, ei := (zr+cr)/2, (zi+ci)/2
		or, oi := (zr-cr)/2, (zi-ci)/2
		wr, wi := f.splitRe[k], f.splitIm[k]
		pr, pi := or*wr-oi*wi, or*wi+oi*wr
		xr, xi := er+pi, ei-pr
		out[k] = math.Sqrt(xr*xr + xi*xi)
	}
}
