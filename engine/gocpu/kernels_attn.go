package gocpu

import "math"

// attnArgs are SDPA's operands as SDPA validated them: q [B, Hq, L, D],
// k [B, Hk, S, D], v [B, Hk, S, Dv]; mask bool (mb) or additive (mf) with
// broadcast strides ms over [B, Hq, L, S].
type attnArgs struct {
	q, k, v         []float32
	B, Hq, Hk, L, S int
	D, Dv           int
	scale           float32
	causal          bool
	mb              []bool
	mf              []float32
	ms              []int
	kT              []float32 // keys packed by sdpaFast
}

// sdpaFast computes SDPA by blocks of kern.nr query rows that share a KV
// head: the rows of the group's query heads, position-major (row r is
// position r/group of head r%group), so K and V are read once per block.
// Per block: scores = (q·scale)·Kᵀ with kern.gemm (query rows as A, keys
// packed transposed as B), masks,
// softmax per row (softmaxRows, bit-identical to softmaxLine) over the keys
// the causal mask leaves to the block, then out = P·V with kern.gemm. Only
// the dot products' summation order differs from the plain path; masks,
// GQA, fully masked rows (NaN) and S = 0 (zeros) behave as there.
func (b *Backend) sdpaFast(a *attnArgs, out []float32) {
	group := a.Hq / a.Hk
	rows, nr := group*a.L, kern.nr // a block is nr query rows
	nb := (rows + nr - 1) / nr
	tasks := a.B * a.Hk * nb
	// Keys packed transposed per KV head, [⌈S/nr⌉][D][nr] (zero-padded), so
	// that each 6×nr block of scores comes out as 6 contiguous runs.
	// One query position (decode) reads the keys once as they are.
	kt := (a.S + nr - 1) / nr
	if a.L > 1 {
		a.kT = make([]float32, a.B*a.Hk*kt*a.D*nr)
	}
	b.pool.each(len(a.kT)/max(a.D*nr, 1), 1, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			head, tile := t/kt, t%kt
			src := a.k[head*a.S*a.D:]
			dst := a.kT[t*a.D*nr:][:a.D*nr]
			for j := 0; j < nr && tile*nr+j < a.S; j++ {
				row := src[(tile*nr+j)*a.D:][:a.D]
				for d, v := range row {
					dst[d*nr+j] = v
				}
			}
		}
	})
	// Each worker's buffer is kept from call to call (a decode step's
	// layers would otherwise allocate megabytes per token).
	if len(b.attn) < b.pool.n {
		b.attn = make([][]float32, b.pool.n)
	}
	need := nr * (2*a.D + a.S + a.S)
	if a.L == 1 && nb == 1 && tasks < b.pool.n && a.S >= decodeSplitKeys {
		b.sdpaDecode(a, need, out)
		return
	}
	b.pool.each(tasks, 1, func(worker, lo, hi int) {
		if cap(b.attn[worker]) < need {
			b.attn[worker] = make([]float32, need)
		}
		buf := b.attn[worker][:need]
		for t := lo; t < hi; t++ {
			bi, kh, blk := t/(a.Hk*nb), t/nb%a.Hk, t%nb
			r0 := blk * nr
			a.block(bi, kh, r0, min(r0+nr, rows), buf, out)
		}
	})
}

// decodeSplitKeys is the context from which one query position's blocks,
// fewer than the workers, are split among them (sdpaDecode).
const decodeSplitKeys = 48

// sdpaDecode is sdpaFast for one query position when its blocks (one per
// KV head: a decode step's 8 query heads share one) are fewer than the
// workers: block's steps with the scores split among the workers by keys
// and P·V by value tiles, so every worker works. Each score and each
// output is the same sum in the same order as in block, whichever worker
// computes it: the bits are block's.
func (b *Backend) sdpaDecode(a *attnArgs, need int, out []float32) {
	nr := kern.nr
	rows := a.Hq / a.Hk
	if cap(b.attn[0]) < need {
		b.attn[0] = make([]float32, need)
	}
	buf := b.attn[0][:need]
	qs, scores := buf[:a.D*nr], buf[a.D*nr:][:rows*a.S]
	qt := buf[nr*(a.D+2*a.S):][:a.D*nr]
	for t := 0; t < a.B*a.Hk; t++ {
		bi, kh := t/a.Hk, t%a.Hk
		sMax := a.prepare(bi, kh, 0, rows, qs, out)
		if sMax == 0 {
			continue
		}
		a.transposeQ(rows, qs, qt)
		b.pool.each(sMax, 6*max(1, sMax/(6*4*b.pool.n)), func(_, lo, hi int) {
			a.scoresByKeys(bi, kh, rows, sMax, qt, scores, lo, hi)
		})
		a.normalize(bi, kh, 0, rows, sMax, scores)
		vt := a.valueTail(bi, kh, sMax, buf[a.D*nr+rows*a.S:])
		b.pool.each((a.Dv+nr-1)/nr, 1, func(_, lo, hi int) {
			a.mulV(bi, kh, 0, rows, sMax, scores, vt, out, lo, hi)
		})
	}
}

// block computes rows [r0, r1) of KV head kh in batch bi.
func (a *attnArgs) block(bi, kh, r0, r1 int, buf, out []float32) {
	nr := kern.nr
	n := r1 - r0
	qs := buf[:a.D*nr]             // q·scale [n][D]
	scores := buf[a.D*nr:][:n*a.S] // [n][sMax]
	sMax := a.prepare(bi, kh, r0, r1, qs, out)
	if sMax == 0 {
		return
	}
	if a.kT == nil {
		qt := buf[nr*(a.D+2*a.S):][:a.D*nr]
		a.transposeQ(n, qs, qt)
		a.scoresByKeys(bi, kh, n, sMax, qt, scores, 0, sMax)
	}
	var rowsA [6][]float32
	var c gemmOut
	kt := (a.S + nr - 1) / nr
	// scores [n, sMax] = (q·scale) [n, D] · Kᵀ, 6 query rows by nr keys.
	for i0 := 0; a.kT != nil && i0 < n; i0 += 6 {
		m := min(6, n-i0)
		for i := 0; i < 6; i++ {
			rowsA[i] = qs[(i0+min(i, m-1))*a.D:][:a.D]
		}
		for t := 0; t*nr < sMax; t++ {
			cols := min(nr, sMax-t*nr)
			kern.gemm(&rowsA, a.kT[((bi*a.Hk+kh)*kt+t)*a.D*nr:], nr, a.D, cols, &c)
			for i := 0; i < m; i++ {
				copy(scores[(i0+i)*sMax+t*nr:][:cols], c[32*i:])
			}
		}
	}
	a.normalize(bi, kh, r0, r1, sMax, scores)
	vt := a.valueTail(bi, kh, sMax, buf[a.D*nr+n*a.S:])
	a.mulV(bi, kh, r0, r1, sMax, scores, vt, out, 0, (a.Dv+nr-1)/nr)
}

// limit is the number of keys the causal mask leaves to block row r.
func (a *attnArgs) limit(r int) int {
	if a.causal {
		return min(max(a.S-a.L+r/(a.Hq/a.Hk)+1, 0), a.S)
	}
	return a.S
}

// prepare sets qs to the rows' q·scale and returns the keys the block
// reads (sMax); with none, it has written the rows (zeros for S = 0, else
// NaN: every key masked) and returns 0.
func (a *attnArgs) prepare(bi, kh, r0, r1 int, qs, out []float32) int {
	group := a.Hq / a.Hk
	sMax := a.limit(r1 - 1)
	for j := 0; j < r1-r0; j++ {
		l, h := (r0+j)/group, kh*group+(r0+j)%group
		qrow := a.q[((bi*a.Hq+h)*a.L+l)*a.D:][:a.D]
		for d, v := range qrow {
			qs[j*a.D+d] = v * a.scale
		}
	}
	if sMax == 0 && a.S > 0 { // all masked (NaN); no keys at all gives zeros
		for j := r0; j < r1; j++ {
			a.outRow(out, bi, kh, j, func(o []float32) {
				for c := range o {
					o[c] = float32(math.NaN())
				}
			})
		}
	}
	return sMax
}

// normalize masks each row's scores (past its causal limit, then the
// boolean or additive mask) and takes their softmax.
func (a *attnArgs) normalize(bi, kh, r0, r1, sMax int, scores []float32) {
	group := a.Hq / a.Hk
	inf := float32(math.Inf(-1))
	for j := 0; j < r1-r0; j++ {
		r := r0 + j
		l, h := r/group, kh*group+r%group
		row := scores[j*sMax : (j+1)*sMax]
		lim := a.limit(r)
		for s := lim; s < sMax; s++ {
			row[s] = inf
		}
		if a.ms != nil && a.mb == nil && a.mf != nil && a.ms[3] == 1 { // an additive mask row, contiguous
			base := bi*a.ms[0] + h*a.ms[1] + l*a.ms[2]
			arithVec('+', row[:lim], a.mf[base:base+lim], row[:lim])
		} else if a.ms != nil {
			base := bi*a.ms[0] + h*a.ms[1] + l*a.ms[2]
			for s := 0; s < lim; s++ {
				mi := base + s*a.ms[3]
				if a.mb != nil && !a.mb[mi] {
					row[s] = inf
				} else if a.mf != nil {
					row[s] += a.mf[mi]
				}
			}
		}
	}
	softmaxRows(scores, r1-r0, sMax)
}

// valueTail packs V's last Dv%nr columns nr wide (zero-padded) into buf
// for mulV's last tile, or returns nil when Dv is a multiple of nr.
func (a *attnArgs) valueTail(bi, kh, sMax int, buf []float32) []float32 {
	nr := kern.nr
	if a.Dv%nr == 0 {
		return nil
	}
	vbase := (bi*a.Hk + kh) * a.S * a.Dv
	vt := buf[:sMax*nr]
	clear(vt)
	tail := a.Dv / nr * nr
	for s := 0; s < sMax; s++ {
		copy(vt[nr*s:], a.v[vbase+s*a.Dv+tail:vbase+(s+1)*a.Dv])
	}
	return vt
}

// mulV writes the rows' out = P [n, sMax] · V [sMax, Dv] for the value
// tiles [ct0, ct1) of nr columns (vt: valueTail's).
func (a *attnArgs) mulV(bi, kh, r0, r1, sMax int, scores, vt, out []float32, ct0, ct1 int) {
	nr, n := kern.nr, r1-r0
	vbase := (bi*a.Hk + kh) * a.S * a.Dv
	var rowsA [6][]float32
	var c gemmOut
	for ct := ct0; ct < ct1; ct++ {
		cols := min(nr, a.Dv-nr*ct)
		bt, ldb := a.v[vbase+nr*ct:], a.Dv
		if cols < nr {
			bt, ldb = vt, nr
		}
		for i0 := 0; i0 < n; i0 += 6 {
			m := min(6, n-i0)
			for i := 0; i < 6; i++ {
				rowsA[i] = scores[(i0+min(i, m-1))*sMax:][:sMax]
			}
			kern.gemm(&rowsA, bt, ldb, sMax, cols, &c)
			for i := 0; i < m; i++ {
				a.outRow(out, bi, kh, r0+i0+i, func(o []float32) {
					copy(o[nr*ct:nr*ct+cols], c[32*i:])
				})
			}
		}
	}
}

// transposeQ sets qt [D][nr] to the block's scaled queries qs [n][D]
// transposed (zero past n), scoresByKeys' B.
func (a *attnArgs) transposeQ(n int, qs, qt []float32) {
	nr := kern.nr
	clear(qt)
	for j := 0; j < n; j++ {
		for d := 0; d < a.D; d++ {
			qt[nr*d+j] = qs[j*a.D+d]
		}
	}
}

// scoresByKeys sets scores [n, sMax] for keys [s0, s1) with keys as the
// A rows, 6 at a time, against the block's scaled queries transposed (qt,
// transposeQ's): for one query position, where packing the keys would
// cost more than it saves. Each score is its own dot product, so a range
// gives the bits the whole does.
func (a *attnArgs) scoresByKeys(bi, kh, n, sMax int, qt, scores []float32, s0, s1 int) {
	nr := kern.nr
	kbase := (bi*a.Hk + kh) * a.S * a.D
	var rowsA [6][]float32
	var c gemmOut
	for ; s0 < s1; s0 += 6 {
		m := min(6, s1-s0)
		for i := 0; i < 6; i++ {
			rowsA[i] = a.k[kbase+(s0+min(i, m-1))*a.D:][:a.D]
		}
		kern.gemm(&rowsA, qt, nr, a.D, n, &c)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				scores[j*sMax+s0+i] = c[32*i+j]
			}
		}
	}
}

// softmaxRows is softmaxLine on each of n rows of width w in v, with the
// exponentials from kern.exp and the max and the scaling vectorized: the
// same sums and NaN rows. Each row's sum runs in order, as softmaxLine's,
// so it is one chain of dependent adds; four rows' chains are interleaved,
// which the CPU runs side by side.
func softmaxRows(v []float32, n, w int) {
	if w == 0 {
		return
	}
	var skip [4]bool
	for r0 := 0; r0 < n; r0 += 4 {
		k := min(4, n-r0)
		for j := 0; j < k; j++ {
			row := v[(r0+j)*w:][:w]
			m, ok := maxRow8(row) // AVX2 where there is no NaN: the same largest value
			if !ok {
				m = maxSkipNaN(row)
			}
			skip[j] = math.IsInf(float64(m), 0) // all masked, or an infinite score
			if skip[j] {
				for i := range row {
					row[i] = float32(math.NaN())
				}
				continue
			}
			kern.exp(row, m) // a NaN score makes the sum, and so the row, NaN
		}
		var s [4]float32
		if k == 4 {
			a, b, c, d := v[r0*w:][:w], v[(r0+1)*w:][:w], v[(r0+2)*w:][:w], v[(r0+3)*w:][:w]
			for i := range a {
				s[0] += a[i]
				s[1] += b[i]
				s[2] += c[i]
				s[3] += d[i]
			}
		} else {
			for j := 0; j < k; j++ {
				for _, e := range v[(r0+j)*w:][:w] {
					s[j] += e
				}
			}
		}
		for j := 0; j < k; j++ {
			if !skip[j] {
				row := v[(r0+j)*w:][:w]
				arithScalar('*', row, 1/s[j], row)
			}
		}
	}
}

// maxSkipNaN is the largest non-NaN value of v (-Inf if none), four
// running maxima at a time.
func maxSkipNaN(v []float32) float32 {
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	for ; i+4 <= len(v); i += 4 { // NaNs are skipped here; they make the sum NaN
		if v[i] > m0 {
			m0 = v[i]
		}
		if v[i+1] > m1 {
			m1 = v[i+1]
		}
		if v[i+2] > m2 {
			m2 = v[i+2]
		}
		if v[i+3] > m3 {
			m3 = v[i+3]
		}
	}
	for ; i < len(v); i++ {
		if v[i] > m0 {
			m0 = v[i]
		}
	}
	m := m0
	for _, x := range [3]float32{m1, m2, m3} {
		if x > m {
			m = x
		}
	}
	return m
}

// outRow calls f with the output row [Dv] of block row r.
func (a *attnArgs) outRow(out []float32, bi, kh, r int, f func([]float32)) {
	group := a.Hq / a.Hk
	l, h := r/group, kh*group+r%group
	f(out[((bi*a.Hq+h)*a.L+l)*a.Dv:][:a.Dv])
}
