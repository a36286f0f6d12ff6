package gocpu

import "perch/engine/tensor"

// The transposes of Linear and GatherLinear, dx = dy · W (the input
// gradients of frozen weights, for training). The fast path feeds dense
// float32 weights to matmulFast in place; 2-byte and quantized ones are
// widened or dequantized a block at a time (linearTCols) into a per-call
// buffer of about lineartBlockBytes, so no quantized weight is ever
// dequantized whole.

// lineartBlockBytes bounds the dequantized weight block (variables, so
// that tests can make blocks small).
var lineartBlockBytes = 2 << 20

// lineartBlockRows bounds the weight rows of a block of linearTCols: the
// kernel's column tile of them stays in L2.
var lineartBlockRows = 2048

func (b *Backend) LinearT(dy tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	w, ok := b.checkLinear("LinearT", l)
	if !ok || !b.ok("LinearT", dy) {
		return empty
	}
	b.resident(w)
	t := dy.(*T)
	if len(t.shape) == 0 || t.shape[len(t.shape)-1] != w.out || w.experts != 1 {
		return b.fail("LinearT", "gradient %v for weight Out=%d (experts %d)", t.shape, w.out, w.experts)
	}
	g := asFloats(t)
	rows := len(g) / w.out
	r := newF(append(cloneShape(t.shape[:len(t.shape)-1]), w.in)...)
	b.linearTRows(w, 0, g, rows, r.f)
	return r
}

// linearTRows sets dx [rows, In] = dy [rows, Out] · W[e].
func (b *Backend) linearTRows(w *weight, e int, dy []float32, rows int, dx []float32) {
	switch {
	case rows == 0:
	case b.opt.Plain:
		linearTPlain(w, e, dy, rows, dx)
	case w.dense != nil:
		b.matmulFast(dy, w.dense[e*w.out*w.in:], []matmulJob{{0, 0, 0}}, rows, w.out, w.in, dx)
	case w.fastLayout():
		b.linearTCols(w, e, dy, rows, dx)
	default:
		b.linearTRowBlocks(w, e, dy, rows, dx)
	}
}

// linearTCols computes dx by blocks of W[e]: up to lineartBlockRows
// output rows (the reduction, run inside the kernel) by as many input
// columns as fit in lineartBlockBytes, dequantized (4-bit values in deq4's
// order) straight into the kernel's column tiles (packColumns). Each block
// is one matmul of the matching columns of dy; its result is written into
// (past the first row block, added to) its columns of dx, 4-bit columns
// put back in natural order as they go. dy is copied only when Out is
// split.
func (b *Backend) linearTCols(w *weight, e int, dy []float32, rows int, dx []float32) {
	unit := 16
	if w.quantized() {
		unit = w.l.GroupSize
		if w.l.Bits == 4 {
			unit = max(64, unit)
		}
	}
	ko := min(w.out, lineartBlockRows)
	nb := min(w.in, max(unit, lineartBlockBytes/(4*ko)/unit*unit))
	q4 := w.l.Bits == 4
	blk := make([]float32, ko*(nb+kern.nr))
	res := make([]float32, rows*nb)
	var dyb []float32
	if ko < w.out {
		dyb = make([]float32, rows*ko)
	}
	for o0 := 0; o0 < w.out; o0 += ko {
		m := min(ko, w.out-o0)
		a := dy
		if dyb != nil {
			a = dyb[:rows*m]
			for r := 0; r < rows; r++ {
				copy(a[r*m:(r+1)*m], dy[r*w.out+o0:][:m])
			}
		}
		for i0 := 0; i0 < w.in; i0 += nb {
			n := min(nb, w.in-i0)
			b.packColumns(w, e, o0, m, i0, n, blk)
			b.matmulPacked(a, blk, rows, m, n, res)
			b.pool.run(rows, 8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					scatterCols(dx[r*w.in+i0:][:n], res[r*n:(r+1)*n], q4, o0 > 0)
				}
			})
		}
	}
}

// packColumns dequantizes (or widens) W[e] rows [o0, o0+m) over inputs
// [i0, i0+n) into bp as matmulPacked's B: [⌈n/nr⌉][m][nr], the last tile
// zero-padded.
func (b *Backend) packColumns(w *weight, e, o0, m, i0, n int, bp []float32) {
	nr := kern.nr
	nt := (n + nr - 1) / nr
	b.pool.run(m, 8, func(lo, hi int) {
		seg := make([]float32, n)
		sbuf := make([]float32, 2*(n/max(w.l.GroupSize, 1)+1))
		for o := lo; o < hi; o++ {
			v := w.segment(e, o0+o, i0, n, seg, sbuf)
			for t := 0; t < nt; t++ {
				dst := bp[(t*m+o)*nr:][:nr]
				clear(dst[copy(dst, v[t*nr:]):])
			}
		}
	})
}

// matmulPacked computes C [m, n] = A [m, k] · B, B packed as packColumns
// leaves it, in tasks of up to 48 rows by up to 4 column tiles
// (consecutive tasks share their rows of A).
func (b *Backend) matmulPacked(fa, bp []float32, m, k, n int, out []float32) {
	nr := kern.nr
	const rowsPerTask, tilesPerTask = 48, 4
	nt := (n + nr - 1) / nr
	ng := (nt + tilesPerTask - 1) / tilesPerTask
	b.pool.each((m+rowsPerTask-1)/rowsPerTask*ng, 1, func(_, lo, hi int) {
		var a [6][]float32
		var c gemmOut
		for task := lo; task < hi; task++ {
			r0, g := task/ng*rowsPerTask, task%ng
			r1 := min(r0+rowsPerTask, m)
			for ct := g * tilesPerTask; ct < min(nt, (g+1)*tilesPerTask); ct++ {
				gemmRows(&a, &c, fa, k, r0, r1, bp[ct*k*nr:], nr, min(nr, n-nr*ct), out[nr*ct:], n)
			}
		}
	})
}

// scatterCols writes (or with add, adds) src into dst, src's 64-value
// blocks in deq4's order when q4.
func scatterCols(dst, src []float32, q4, add bool) {
	switch {
	case !q4 && !add:
		copy(dst, src)
	case !q4:
		addTo(dst, src)
	default:
		for j := 0; j+64 <= len(src); j += 64 {
			s, d := src[j:j+64:j+64], dst[j:j+64:j+64]
			for k := 0; k < 8; k++ {
				for i := 0; i < 8; i++ {
					if add {
						d[8*i+k] += s[8*k+i]
					} else {
						d[8*i+k] = s[8*k+i]
					}
				}
			}
		}
	}
}

// linearTRowBlocks is linearTRows for quantized layouts the kernels do not
// take: blocks of whole weight rows in natural order, partial products
// summed into dx.
func (b *Backend) linearTRowBlocks(w *weight, e int, dy []float32, rows int, dx []float32) {
	kc := max(8, min(w.out, lineartBlockBytes/(4*w.in)))
	blk := make([]float32, kc*w.in)
	dyb := make([]float32, rows*kc)
	var part []float32
	for o0 := 0; o0 < w.out; o0 += kc {
		n := min(kc, w.out-o0)
		b.weightRows(w, e, o0, n, blk)
		for r := 0; r < rows; r++ {
			copy(dyb[r*n:(r+1)*n], dy[r*w.out+o0:][:n])
		}
		if o0 == 0 {
			b.matmulFast(dyb, blk, []matmulJob{{0, 0, 0}}, rows, n, w.in, dx)
			continue
		}
		if part == nil {
			part = make([]float32, rows*w.in)
		}
		b.matmulFast(dyb, blk, []matmulJob{{0, 0, 0}}, rows, n, w.in, part)
		b.pool.run(len(dx), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dx[i] += part[i]
			}
		})
	}
}

// weightRows writes rows [o0, o0+n) of expert e, in natural column order,
// into dst [n, In].
func (b *Backend) weightRows(w *weight, e, o0, n int, dst []float32) {
	b.pool.run(n, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			w.row(e, o0+i, dst[i*w.in:(i+1)*w.in])
		}
	})
}

// linearTPlain: dx[r, i] = Σ_o dy[r, o] · W[o, i], weight row by row.
func linearTPlain(w *weight, e int, dy []float32, rows int, dx []float32) {
	buf := make([]float32, w.in)
	clear(dx[:rows*w.in])
	for o := 0; o < w.out; o++ {
		w.row(e, o, buf)
		for r := 0; r < rows; r++ {
			g := dy[r*w.out+o]
			if g == 0 {
				continue
			}
			xr := dx[r*w.in:][:w.in]
			for i, v := range buf {
				xr[i] += g * v
			}
		}
	}
}

func (b *Backend) GatherLinearT(dy tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	w, ok := b.checkLinear("GatherLinearT", l)
	if !ok || !b.ok("GatherLinearT", dy, idx) {
		return empty
	}
	b.resident(w)
	td, ti := dy.(*T), idx.(*T)
	if len(td.shape) != 3 || len(ti.shape) != 2 || td.shape[0] != ti.shape[0] || td.shape[1] != ti.shape[1] || td.shape[2] != w.out {
		return b.fail("GatherLinearT", "gradient %v, idx %v for Out=%d", td.shape, ti.shape, w.out)
	}
	ids, ok := b.indices("GatherLinearT", ti, w.experts)
	if !ok {
		return empty
	}
	g := asFloats(td)
	N, K := ti.shape[0], ti.shape[1]
	r := newF(N, K, w.in)
	byExpert := make([][]int, w.experts)
	for p, e := range ids {
		byExpert[e] = append(byExpert[e], p)
	}
	for e, ps := range byExpert {
		if len(ps) == 0 {
			continue
		}
		ge := make([]float32, len(ps)*w.out)
		for i, p := range ps {
			copy(ge[i*w.out:(i+1)*w.out], g[p*w.out:])
		}
		xe := make([]float32, len(ps)*w.in)
		b.linearTRows(w, e, ge, len(ps), xe)
		for i, p := range ps {
			copy(r.f[p*w.in:(p+1)*w.in], xe[i*w.in:])
		}
	}
	return r
}
