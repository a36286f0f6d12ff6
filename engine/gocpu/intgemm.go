package gocpu

import "math"

// Integer prefill (the fast path's GEMM for 4-bit weights, as llama.cpp's
// Q8_0 activations): each input row is quantized per block of 32 to int8,
// xi = round(x/d) with d = max|x|/127, and meets the 4-bit weights in
// integer dot products; per block the sum is scaled by d, per group the
// block terms by the weight group's scale s, and the bias term adds
// b·Σ d·xi (the quantized sum, so that the error is Σ (s·q+b)·(d·xi − x),
// not s·q's alone).
//
// Layouts, per tile of 8 input rows and per panel of 16 weight rows:
//   - activations: xq [K/8][8 rows][8] int8, a row's 8 inputs of a step
//     as the nibbles of a packed word fall: even ones, then odd ones;
//     d [K/32][8], xs [groups][8];
//   - weights: p [K/8][16] uint32, the checkpoint's packed words (8
//     nibbles, low first) of the 16 rows side by side, so that one load
//     holds a step of every row and masking (even inputs) or shifting and
//     masking (odd ones) unpacks them in registers; s and b [groups][16].
// One kernel call computes the 8×16 block c[r·ldc+j] for a tile and a
// panel: per step of 8 inputs a row's 4 even and 4 odd bytes are broadcast
// against the panel's unpacked bytes, so no horizontal sums are needed.
// A panel is the packed words moved, not widened: one copy per panel and
// GEMM, met by every tile.

// intBlock is the activation block: 32 inputs share one scale.
const intBlock = 32

// intRows and intCols are the kernel's block: input rows per tile, weight
// rows per panel.
const (
	intRows = 8
	intCols = 16
)

// intLayout reports whether the integer prefill covers w (4-bit, groups a
// multiple of the activation block).
func (w *weight) intLayout() bool {
	return w.l.Bits == 4 && w.in%64 == 0 && w.l.GroupSize%intBlock == 0 && w.fastLayout()
}

// intTiles is x [L, K] quantized by rows, in the kernels' tile layout
// (rows past L are zero).
type intTiles struct {
	n         int // tiles
	xq        []int8
	d, xs     []float32
	K, groups int
}

// tile returns tile t's activations.
func (q *intTiles) tile(t int) (xq []int8, d, xs []float32) {
	K, G := q.K, q.groups
	return q.xq[t*intRows*K:][:intRows*K], q.d[t*intRows*K/intBlock:][:intRows*K/intBlock], q.xs[t*intRows*G:][:intRows*G]
}

// intScratch keeps the integer prefill's buffers between calls: the
// quantized tiles and each worker's panel.
type intScratch struct {
	xq     []int8
	f      []float32
	panels []intPanel
}

func (b *Backend) quantizeRows(x []float32, L, K, gs int) *intTiles {
	n := (L + intRows - 1) / intRows
	G := K / gs
	nq, nd, nx := n*intRows*K, n*intRows*K/intBlock, n*intRows*G
	s := &b.ints
	if cap(s.xq) < nq {
		s.xq = make([]int8, nq)
	}
	if cap(s.f) < nd+nx {
		s.f = make([]float32, nd+nx)
	}
	q := &intTiles{n: n, K: K, groups: G, xq: s.xq[:nq], d: s.f[:nd], xs: s.f[nd : nd+nx]}
	if tail := L % intRows; tail != 0 { // rows past L: zero
		xq, d, xs := q.tile(n - 1)
		for r := tail; r < intRows; r++ {
			for st := 0; st < K/8; st++ {
				clear(xq[(st*intRows+r)*8:][:8])
			}
			for blk := 0; blk < K/intBlock; blk++ {
				d[blk*intRows+r] = 0
			}
			for g := 0; g < G; g++ {
				xs[g*intRows+r] = 0
			}
		}
	}
	b.pool.run(L, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			q.quantizeRow(r, x[r*K:(r+1)*K], gs)
		}
	})
	return q
}

// quantizeRow writes row r (x: K values) into the tile layout. A block with
// an infinite or NaN value gets d = NaN (and zero int8 values), so that its
// outputs are NaN.
func (q *intTiles) quantizeRow(r int, x []float32, gs int) {
	xq, d, xs := q.tile(r / intRows)
	ri := r % intRows
	for g := 0; g < q.groups; g++ {
		xs[g*intRows+ri] = 0
	}
	var sums [16]int32
	for b0 := 0; b0 < q.K/intBlock; b0 += len(sums) {
		nb := min(len(sums), q.K/intBlock-b0)
		kern.quant8(x[b0*intBlock:][:nb*intBlock], xq[(b0*intBlock/8*intRows+ri)*8:], d[b0*intRows+ri:], sums[:nb])
		for i := 0; i < nb; i++ {
			blk := b0 + i
			xs[(blk*intBlock/gs)*intRows+ri] += d[blk*intRows+ri] * float32(sums[i])
		}
	}
}

// intTiny is the smallest block maximum quantized: below it 127/amax
// would overflow float32, and the block (|x| < 2^-121) is taken as zero.
const intTiny = 0x1p-121

// quant8Go is the portable quantizer: x (a multiple of 32 values, block
// i at x[32i:]) into out (step j of 8 inputs at out[64j:][:8], even
// inputs first), d[8i] the block's scale and sums[i] its int8 sum. A block
// with Inf or NaN gets d = NaN, one whose |x| stay below intTiny d = 0;
// both get zero int8 values.
func quant8Go(x []float32, out []int8, d []float32, sums []int32) {
	for blk := range sums {
		xb := x[blk*intBlock:][:intBlock]
		var amax float32
		finite := true
		for _, v := range xb {
			a := abs32(v)
			if !(a <= math.MaxFloat32) {
				finite = false
			}
			amax = max(amax, a)
		}
		var db, id float32
		switch {
		case !finite:
			db = float32(math.NaN())
		case amax >= intTiny:
			db, id = amax/127, 127/amax
		}
		var sum int32
		for st := 0; st < intBlock/8; st++ {
			o, v := out[(blk*intBlock/8+st)*8*intRows:][:8], xb[8*st:][:8]
			for i := 0; i < 4; i++ {
				e, od := int8(0), int8(0)
				if finite {
					e, od = int8(roundAway(v[2*i]*id)), int8(roundAway(v[2*i+1]*id))
				}
				o[i], o[4+i] = e, od
				sum += int32(e) + int32(od)
			}
		}
		d[blk*intRows] = db
		sums[blk] = sum
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// roundAway rounds to nearest, halves away from zero (|v| ≤ 127 here), in
// float32 as the kernels do: trunc(v ± 0.5).
func roundAway(v float32) int32 {
	if v < 0 {
		return -int32(-v + 0.5)
	}
	return int32(v + 0.5)
}

// intPanel holds 16 rows of 4-bit weights in the kernels' panel layout.
type intPanel struct {
	p    []uint32  // [K/8][16]
	s, b []float32 // [groups][16]
	sb   []float32 // one row's widened scales and biases
}

// resize makes the panel w's size, keeping its buffers when they are large
// enough.
func (pn *intPanel) resize(w *weight) {
	fit := func(v []float32, n int) []float32 {
		if cap(v) < n {
			return make([]float32, n)
		}
		return v[:n]
	}
	if cap(pn.p) < 2*w.in {
		pn.p = make([]uint32, 2*w.in)
	}
	pn.p = pn.p[:2*w.in]
	pn.s, pn.b, pn.sb = fit(pn.s, intCols*w.groups), fit(pn.b, intCols*w.groups), fit(pn.sb, 2*w.groups)
}

// load fills the panel with expert e's rows [o0, o0+n), n ≤ 16; rows past
// n are zero.
func (pn *intPanel) load(w *weight, e, o0, n int) {
	G := w.groups
	if n < intCols {
		clear(pn.p)
		clear(pn.s)
		clear(pn.b)
	}
	if n < intCols || !panelWords16(pn.p, w.packed, e*w.out+o0, w.words) {
		pn.loadWords(w, e*w.out+o0, n)
	}
	for c := 0; c < n; c++ {
		row := e*w.out + o0 + c
		s, b := w.affine(row*G, (row+1)*G, pn.sb[:G:G], pn.sb[G:])
		for g := 0; g < G; g++ {
			pn.s[intCols*g+c], pn.b[intCols*g+c] = s[g], b[g]
		}
	}
}

// loadWords is load's move of the packed words in Go: rows [row0, row0+n)
// side by side, the panel written in order.
func (pn *intPanel) loadWords(w *weight, row0, n int) {
	var rows [intCols][]uint32
	for c := 0; c < n; c++ {
		rows[c] = w.packed[(row0+c)*w.words:][:w.words]
	}
	for j := 0; j < w.words; j++ {
		p := pn.p[intCols*j:][:intCols]
		for c, r := range rows[:n] {
			p[c] = r[j]
		}
	}
}

// gemmLinearInt computes y [L, Out] = x [L, In] · W[e]ᵀ for 4-bit w on
// the integer path: x quantized once, then the workers take panels of 16
// weight rows, each moved once into the panel layout and met by every
// tile of 8 input rows.
func (b *Backend) gemmLinearInt(w *weight, e int, x []float32, L int, y []float32) {
	K, Out := w.in, w.out
	q := b.quantizeRows(x, L, K, w.l.GroupSize)
	panels := (Out + intCols - 1) / intCols
	if len(b.ints.panels) < b.pool.n {
		b.ints.panels = make([]intPanel, b.pool.n)
	}
	bufs := b.ints.panels
	bpg := w.l.GroupSize / intBlock
	b.pool.each(panels, max(1, panels/(8*b.pool.n)), func(worker, lo, hi int) {
		pn := &bufs[worker]
		pn.resize(w)
		var c [intRows * intCols]float32
		for t := lo; t < hi; t++ {
			o0 := intCols * t
			n := min(intCols, Out-o0)
			pn.load(w, e, o0, n)
			for ti := 0; ti < q.n; ti++ {
				xq, d, xs := q.tile(ti)
				rows := min(intRows, L-intRows*ti)
				if n == intCols && rows == intRows { // straight into y
					kern.q4i8(pn.p, pn.s, pn.b, xq, d, xs, bpg, y[intRows*ti*Out+o0:], Out)
					continue
				}
				kern.q4i8(pn.p, pn.s, pn.b, xq, d, xs, bpg, c[:], intCols)
				for r := 0; r < rows; r++ {
					copy(y[(intRows*ti+r)*Out+o0:][:n], c[intCols*r:])
				}
			}
		}
	})
}

// q4i8Go is the portable kernel: c[r·ldc+j] = Σ_g s[g,j]·Σ_{blk∈g}
// d[blk,r]·Σ_k w[j,k]·xq[r,k] + Σ_g b[g,j]·xs[g,r], in the assembly's
// order: per block an exact integer sum, gs += sum·d; per group acc +=
// gs·s, then acc += b·xs (the assembly fuses each multiply-add).
func q4i8Go(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := len(s) / intCols
	var acc [intRows][intCols]float32
	for g := 0; g < groups; g++ {
		var gs [intRows][intCols]float32
		for blk := g * bpg; blk < (g+1)*bpg; blk++ {
			var isum [intRows][intCols]int32
			for st := blk * intBlock / 8; st < (blk+1)*intBlock/8; st++ {
				wp := p[st*intCols:][:intCols]
				xp := xq[st*intRows*8:][:intRows*8]
				for j, v := range wp {
					for r := 0; r < intRows; r++ {
						x := xp[8*r:][:8]
						var sum int32
						for i := 0; i < 4; i++ {
							sum += int32(v>>(8*i)&15)*int32(x[i]) + int32(v>>(8*i+4)&15)*int32(x[4+i])
						}
						isum[r][j] += sum
					}
				}
			}
			for r := 0; r < intRows; r++ {
				for j := 0; j < intCols; j++ {
					gs[r][j] += float32(isum[r][j]) * d[intRows*blk+r]
				}
			}
		}
		for r := 0; r < intRows; r++ {
			for j := 0; j < intCols; j++ {
				acc[r][j] += gs[r][j] * s[intCols*g+j]
				acc[r][j] += b[intCols*g+j] * xs[intRows*g+r]
			}
		}
	}
	for r := 0; r < intRows; r++ {
		copy(c[r*ldc:r*ldc+intCols], acc[r][:])
	}
}
