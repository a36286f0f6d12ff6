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

// block computes rows [r0, r1) of KV head kh in batch bi.
func (a *attnArgs) block(bi, kh, r0, r1 int, buf, out []float32) {
	group, nr := a.Hq/a.Hk, kern.nr
	n := r1 - r0
	qs := buf[:a.D*nr]             // q·scale [n][D]
	scores := buf[a.D*nr:][:n*a.S] // [n][sMax]
	limit := func(r int) int {
		if a.causal {
			return min(max(a.S-a.L+r/group+1, 0), a.S)
		}
		return a.S
	}
	sMax := limit(r1 - 1)
	for j := 0; j < n; j++ {
		l, h := (r0+j)/group, kh*group+(r0+j)%group
		qrow := a.q[((bi*a.Hq+h)*a.L+l)*a.D:][:a.D]
		for d, v := range qrow {
			qs[j*a.D+d] = v * a.scale
		}
	}
	if sMax == 0 { // no keys (zeros, as the plain path), or all masked (NaN)
		if a.S == 0 {
			return
		}
		for j := 0; j < n; j++ {
			a.outRow(out, bi, kh, r0+j, func(o []float32) {
				for c := range o {
					o[c] = float32(math.NaN())
				}
			})
		}
		return
	}
	vbase := (bi*a.Hk + kh) * a.S * a.Dv
	var rowsA [6][]float32
	var c gemmOut
	if a.kT == nil {
		a.scoresByKeys(bi, kh, n, sMax, qs, scores, buf[nr*(a.D+2*a.S):])
	}
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
	inf := float32(math.Inf(-1))
	for j := 0; j < n; j++ {
		r := r0 + j
		l, h := r/group, kh*group+r%group
		row := scores[j*sMax : (j+1)*sMax]
		lim := limit(r)
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
	softmaxRows(scores, n, sMax)
	// out rows = P [n, sMax] · V [sMax, Dv], nr value columns at a time.
	var vt []float32
	if a.Dv%nr != 0 {
		vt = buf[a.D*nr+n*a.S:][:sMax*nr]
		clear(vt)
		tail := a.Dv / nr * nr
		for s := 0; s < sMax; s++ {
			copy(vt[nr*s:], a.v[vbase+s*a.Dv+tail:vbase+(s+1)*a.Dv])
		}
	}
	for ct := 0; ct*nr < a.Dv; ct++ {
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

// scoresByKeys sets scores [n, sMax] with keys as the A rows, 6 at a
// time, against the block's scaled queries qs [n][D] transposed into qt
// [D][nr]: for one query position, where packing the keys would cost more
// than it saves.
func (a *attnArgs) scoresByKeys(bi, kh, n, sMax int, qs, scores, qt []float32) {
	nr := kern.nr
	qt = qt[:a.D*nr]
	clear(qt)
	for j := 0; j < n; j++ {
		for d := 0; d < a.D; d++ {
			qt[nr*d+j] = qs[j*a.D+d]
		}
	}
	kbase := (bi*a.Hk + kh) * a.S * a.D
	var rowsA [6][]float32
	var c gemmOut
	for s0 := 0; s0 < sMax; s0 += 6 {
		m := min(6, sMax-s0)
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
