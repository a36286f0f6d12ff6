package gocpu

import (
	"math"
	"unsafe"
)

// Integer prefill (the fast path's GEMM for 4-bit weights, as llama.cpp's
// Q8_0 activations): each input row is quantized per block of 32 to int8,
// xi = round(x/d) with d = max|x|/127, and meets the 4-bit weights in
// integer dot products; per block the sum is scaled by d·s (s the weight
// group's scale) and per group the bias term adds b·Σ d·xi (the quantized
// sum, so that the error is Σ (s·q+b)·(d·xi − x), not s·q's alone).
//
// Layouts, per quad of 4 input rows and per panel of 8 weight rows:
//   - activations: xq [K/4][4 rows][4] int8, d [K/32][4], xs [groups][4];
//   - weights: p [K/4][8 rows][4] bytes 0..15, s and b [groups][8].
// One kernel call computes the 4×8 block c[8r+j] for a quad and a panel:
// per step of 4 inputs a row's 4 bytes are broadcast against the panel's
// 32 (vpmaddubsw), so no horizontal sums are needed.

// intBlock is the activation block: 32 inputs share one scale.
const intBlock = 32

// intLayout reports whether the integer prefill covers w (4-bit, groups a
// multiple of the activation block).
func (w *weight) intLayout() bool {
	return w.l.Bits == 4 && w.in%64 == 0 && w.l.GroupSize%intBlock == 0 && w.fastLayout()
}

// quads is x [L, K] quantized by rows, in the kernels' quad layout (rows
// past L are zero).
type quads struct {
	n         int
	xq        []int8    // [n][K/4][4][4]
	d, xs     []float32 // [n][K/32][4], [n][groups][4]
	K, groups int
}

func (b *Backend) quantizeRows(x []float32, L, K, gs int) *quads {
	n := (L + 3) / 4
	q := &quads{n: n, K: K, groups: K / gs,
		xq: make([]int8, n*4*K), d: make([]float32, n*4*K/intBlock), xs: make([]float32, n*4*(K/gs))}
	b.pool.run(L, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			q.quantizeRow(r, x[r*K:(r+1)*K], gs)
		}
	})
	return q
}

// quantizeRow writes row r (x: K values) into the quad layout. A block with
// an infinite or NaN value gets d = NaN, so that its outputs are NaN.
func (q *quads) quantizeRow(r int, x []float32, gs int) {
	K, qi, ri := q.K, r/4, r%4
	xq := q.xq[qi*4*K:][:4*K]
	d := q.d[qi*4*K/intBlock:][:4*K/intBlock]
	xs := q.xs[qi*4*q.groups:][:4*q.groups]
	for blk := 0; blk < K/intBlock; blk++ {
		xb := x[blk*intBlock:][:intBlock]
		var amax float32
		for _, v := range xb {
			amax = max(amax, abs32(v))
		}
		db, id := amax/127, float32(0)
		switch {
		case math.IsInf(float64(amax), 0) || amax != amax:
			db = float32(math.NaN())
		case amax > 0:
			id = 127 / amax
		}
		var sum int32
		out := xq[blk*intBlock*4+4*ri:]
		for s := 0; s < intBlock/4; s++ { // 8 steps of 4 inputs, 16 bytes apart
			o, v := out[16*s:16*s+4], xb[4*s:4*s+4]
			for i := range o {
				o[i] = int8(roundAway(v[i] * id))
				sum += int32(o[i])
			}
		}
		d[blk*4+ri] = db
		xs[(blk*intBlock/gs)*4+ri] += db * float32(sum)
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// roundAway rounds to nearest, halves away from zero (|v| ≤ 127 here).
func roundAway(v float32) int32 {
	if v < 0 {
		return -int32(-v + 0.5)
	}
	return int32(v + 0.5)
}

// panel4 holds 8 rows of 4-bit weights in the kernels' panel layout.
type panel4 struct {
	p    []uint32  // [K/4][8]: 4 weights of one row, one per byte
	s, b []float32 // [groups][8]
	sb   []float32 // one row's widened scales and biases
}

func newPanel4(w *weight) *panel4 {
	return &panel4{p: make([]uint32, 2*w.in), s: make([]float32, 8*w.groups), b: make([]float32, 8*w.groups),
		sb: make([]float32, 2*w.groups)}
}

// load fills the panel with expert e's rows [o0, o0+n), n ≤ 8; rows past n
// are zero.
func (pn *panel4) load(w *weight, e, o0, n int) {
	G := w.groups
	if n < 8 {
		clear(pn.p)
		clear(pn.s)
		clear(pn.b)
	}
	for c := 0; c < n; c++ {
		row := e*w.out + o0 + c
		words := w.packed[row*w.words:][:w.words]
		for j, v := range words { // word j holds inputs 8j..8j+7, low nibble first
			pn.p[16*j+c] = spreadNibbles(v & 0xffff)
			pn.p[16*j+8+c] = spreadNibbles(v >> 16)
		}
		s, b := w.affine(row*G, (row+1)*G, pn.sb[:G:G], pn.sb[G:])
		for g := 0; g < G; g++ {
			pn.s[8*g+c], pn.b[8*g+c] = s[g], b[g]
		}
	}
}

// spreadNibbles puts the 4 nibbles of v (< 1<<16) into 4 bytes, low first.
func spreadNibbles(v uint32) uint32 {
	v = (v | v<<8) & 0x00ff00ff
	return (v | v<<4) & 0x0f0f0f0f
}

// gemmLinearInt computes y [L, Out] = x [L, In] · W[e]ᵀ for 4-bit w on
// the integer path: x quantized once, then the workers take panels of 8
// weight rows, each repacked once and met by every quad of input rows.
func (b *Backend) gemmLinearInt(w *weight, e int, x []float32, L int, y []float32) {
	K, Out := w.in, w.out
	q := b.quantizeRows(x, L, K, w.l.GroupSize)
	panels := (Out + 7) / 8
	bufs := make([]*panel4, b.pool.n)
	bpg := w.l.GroupSize / intBlock
	b.pool.each(panels, max(1, panels/(16*b.pool.n)), func(worker, lo, hi int) {
		if bufs[worker] == nil {
			bufs[worker] = newPanel4(w)
		}
		pn := bufs[worker]
		var c [32]float32
		for t := lo; t < hi; t++ {
			o0 := 8 * t
			n := min(8, Out-o0)
			pn.load(w, e, o0, n)
			for qi := 0; qi < q.n; qi++ {
				xq, d, xs := q.xq[qi*4*K:][:4*K], q.d[qi*4*K/intBlock:][:4*K/intBlock], q.xs[qi*4*q.groups:][:4*q.groups]
				rows := min(4, L-4*qi)
				if n == 8 && rows == 4 { // straight into y
					kern.q4i8(pn.p, pn.s, pn.b, xq, d, xs, bpg, y[4*qi*Out+o0:], Out)
					continue
				}
				kern.q4i8(pn.p, pn.s, pn.b, xq, d, xs, bpg, c[:], 8)
				for r := 0; r < rows; r++ {
					copy(y[(4*qi+r)*Out+o0:][:n], c[8*r:])
				}
			}
		}
	})
}

// q4i8Go is the portable kernel: c[r·ldc+j] = Σ_blk s[g,j]·d[blk,r]·Σ_k
// p[j,k]·xq[r,k] + Σ_g b[g,j]·xs[g,r] in the assembly's order (per block
// an exact integer sum, then acc += sum·(s·d); per group the bias).
func q4i8Go(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := len(s) / 8
	pb := u32bytes(p)
	var acc [4][8]float32
	for g := 0; g < groups; g++ {
		for blk := g * bpg; blk < (g+1)*bpg; blk++ {
			var isum [4][8]int32
			for st := 0; st < intBlock/4; st++ {
				wp := pb[(blk*intBlock/4+st)*32:][:32]
				xp := xq[(blk*intBlock/4+st)*16:][:16]
				for r := 0; r < 4; r++ {
					for j := 0; j < 8; j++ {
						isum[r][j] += int32(wp[4*j])*int32(xp[4*r]) + int32(wp[4*j+1])*int32(xp[4*r+1]) +
							int32(wp[4*j+2])*int32(xp[4*r+2]) + int32(wp[4*j+3])*int32(xp[4*r+3])
					}
				}
			}
			for r := 0; r < 4; r++ {
				for j := 0; j < 8; j++ {
					acc[r][j] += float32(isum[r][j]) * (s[8*g+j] * d[4*blk+r])
				}
			}
		}
		for r := 0; r < 4; r++ {
			for j := 0; j < 8; j++ {
				acc[r][j] += b[8*g+j] * xs[4*g+r]
			}
		}
	}
	for r := 0; r < 4; r++ {
		copy(c[r*ldc:r*ldc+8], acc[r][:])
	}
}

// u32bytes views p as its bytes.
func u32bytes(p []uint32) []byte {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 4*len(p))
}
