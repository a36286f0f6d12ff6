package gocpu

import (
	"math"
	"sync"
	"unsafe"
)

// Integer decode (Options.IntDecode): the matvec of 4-bit weights with
// bfloat16 or float32 scales against int8 activations, as llama.cpp's
// Q8_0 ones. x is quantized once per matvec (AVX2 or AVX-512 quantizer,
// the same values), per block of 32 as the integer prefill does
// (d = max|x|/127, xi = round(x/d) halves away, a non-finite block gets
// d = NaN; xs[g] = Σ_blk d·Σxi per group); each weight row is read as it is
// stored (8 nibbles per word, low first; no repack) and met in integer dot
// products, 4 products per int32 lane.
//
// The lanes: a chunk of 128 inputs is 64 weight bytes, 16 lanes of 4 bytes;
// lane L holds inputs 8L..8L+7, its low nibbles the even ones and its high
// nibbles the odd ones. So per chunk the activations are stored even inputs
// first (xq[c+i] = x[c+2i], xq[c+64+i] = x[c+2i+1], i < 64), and a lane's
// sum is two 4-byte dot products (VPDPBUSD, or VPMADDUBSW+VPMADDWD). A last
// chunk of 64 inputs (K%128 == 64) fills lanes 0..7 with its halves 32
// apart. Per lane, in float32: acc[L] += float(isum)·(s·dl) with dl the
// lane's block scale and s its group's, rounded after each multiply and
// add (no fused multiply-add, so that the Go reference gives the same
// bits); then the bias terms b[g]·xs[g] go to lane g%16, and the 16 lanes
// are summed pairwise (8+8, 4+4, 2+2, 1+1). Every kernel set computes
// exactly this, so the integer decode gives the same bits on each.

// intVec is one row of x quantized for q4dotI8: xq [K] in the chunks'
// even/odd order, dl [K/8] the block scale of each lane, xs [K/gs].
type intVec struct {
	xq     []int8
	dl, xs []float32
}

// intDecodeLayout reports whether the integer decode covers w: 4-bit
// weights with bfloat16 or float32 scales in a layout the matvec kernels
// take (IEEE-half scales stay on the exact path).
func (w *weight) intDecodeLayout() bool {
	return w.l.Bits == 4 && !(w.scalesH != nil && w.f16) && w.fastLayout()
}

// quantizeVec quantizes x (K%64 == 0) into v for groups of gs (K%gs == 0,
// gs a power of two ≥ 32) with the kernel set's quantizer, reusing v's
// slices when they are large enough.
func quantizeVec(x []float32, gs int, v *intVec) {
	K := len(x)
	v.xq = grow(v.xq, K)
	v.dl = grow(v.dl, K/8)
	v.xs = grow(v.xs, K/gs)
	clear(v.xs)
	kern.quantVec(x, gs, v.xq, v.dl, v.xs)
}

// quantizeVecGo is the portable quantizer and the reference: per block of
// 32, d and the rounded values (all 0 in a non-finite block) into the
// chunks' even/odd order, d on the block's 4 lanes of dl, and d·Σxi added
// to xs of its group.
func quantizeVecGo(x []float32, gs int, xq []int8, dl, xs []float32) {
	K := len(x)
	for blk := 0; blk < K; blk += intBlock {
		c := blk &^ 127
		half := min(128, K-c) / 2
		xb := x[blk : blk+intBlock]
		var amax float32
		for _, f := range xb {
			amax = max(amax, abs32(f))
		}
		d, id := quantScale(amax)
		even, odd := xq[c+(blk-c)/2:][:16], xq[c+half+(blk-c)/2:][:16]
		var sum int32
		for i := range even {
			e, o := int8(roundAway(float32(xb[2*i]*id))), int8(roundAway(float32(xb[2*i+1]*id)))
			if id == 0 {
				e, o = 0, 0
			}
			even[i], odd[i] = e, o
			sum += int32(e) + int32(o)
		}
		dl[blk/8], dl[blk/8+1], dl[blk/8+2], dl[blk/8+3] = d, d, d, d
		xs[blk/gs] += float32(d * float32(sum))
	}
}

// quantScale is a block's scale d = amax/127 and its inverse (0 for an
// all-zero block; d NaN for a block with an infinite or NaN value). A
// block too small for 127/amax to be finite quantizes to zeros.
func quantScale(amax float32) (d, id float32) {
	switch {
	case math.IsInf(float64(amax), 0) || amax != amax:
		return float32(math.NaN()), 0
	case amax > 0:
		id = 127 / amax
		if math.IsInf(float64(id), 0) {
			id = 0
		}
	}
	return amax / 127, id
}

// grow returns s resized to n, reallocated only when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// q4dotI8Go is the portable kernel and the reference: y[r] for len(y)
// 4-bit rows of K = len(xq) inputs (w: K/8 words per row; s, b: K/gs
// bfloat16 or float32 values per row) against the quantized x, in the
// order described above.
func q4dotI8Go[S uint16 | float32](w []uint32, s, b []S, xq []int8, dl, xs, y []float32, gs int) {
	K := len(xq)
	words, groups := K/8, K/gs
	for r := range y {
		wr := u32bytes(w[r*words:][:words])
		sr, br := s[r*groups:][:groups], b[r*groups:][:groups]
		var acc [16]float32
		for c := 0; c < K; c += 128 {
			n := min(128, K-c)
			for L := 0; L < n/8; L++ {
				var isum int32
				for j := 0; j < 4; j++ {
					wb := wr[c/2+4*L+j]
					isum += int32(wb&0xf)*int32(xq[c+4*L+j]) + int32(wb>>4)*int32(xq[c+n/2+4*L+j])
				}
				sc := float32(toF32(sr[(c+8*L)/gs]) * dl[c/8+L])
				acc[L] += float32(float32(isum) * sc)
			}
		}
		for g := range br {
			acc[g%16] += float32(toF32(br[g]) * xs[g])
		}
		y[r] = hsum16(&acc)
	}
}

func bf16(v uint16) float32 { return math.Float32frombits(uint32(v) << 16) }

// toF32 is a scale's value: a bfloat16 widened, or a float32 as it is.
func toF32[S uint16 | float32](v S) float32 {
	switch v := any(v).(type) {
	case uint16:
		return bf16(v)
	case float32:
		return v
	}
	panic("unreachable")
}

// hsum16 sums 16 lanes as the kernels do: 8+8, 4+4, 2+2, 1+1.
func hsum16(a *[16]float32) float32 {
	var v [8]float32
	for i := range v {
		v[i] = a[i+8] + a[i]
	}
	for i := 0; i < 4; i++ {
		v[i] = v[i+4] + v[i]
	}
	for i := 0; i < 2; i++ {
		v[i] = v[i+2] + v[i]
	}
	return v[1] + v[0]
}

// intVecs holds quantized rows for reuse across matvecs.
var intVecs = sync.Pool{New: func() any { return new([]intVec) }}

// matvecInt is matvec on the integer decode: each input row quantized once,
// then weight rows split across the workers as matvec splits them.
func (b *Backend) matvecInt(w *weight, e int, x []float32, rows int, y []float32) {
	K, Out, gs := w.in, w.out, w.l.GroupSize
	vp := intVecs.Get().(*[]intVec)
	defer intVecs.Put(vp)
	if len(*vp) < rows {
		*vp = make([]intVec, matvecMaxRows)
	}
	vs := (*vp)[:rows]
	for r := range vs {
		quantizeVec(x[r*K:(r+1)*K], gs, &vs[r])
	}
	chunk := max(16, Out/(8*b.pool.n))
	if rows > 1 {
		chunk = max(8, (128<<10)/(w.words*4))
	}
	b.pool.each(Out, chunk, func(_, lo, hi int) {
		wr := w.expert(e, lo, hi, nil)
		for r := range vs {
			v := &vs[r]
			if wr.sH != nil {
				kern.q4dotI8(wr.packed, wr.sH, wr.bH, v.xq, v.dl, v.xs, y[r*Out+lo:r*Out+hi], gs)
			} else {
				kern.q4dotI8F(wr.packed, wr.s, wr.bi, v.xq, v.dl, v.xs, y[r*Out+lo:r*Out+hi], gs)
			}
		}
	})
}

// u32bytes views p's words as their little-endian bytes.
func u32bytes(p []uint32) []byte {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 4*len(p))
}
