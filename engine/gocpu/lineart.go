package gocpu

import "perch/engine/tensor"

// The transposes of Linear and GatherLinear, dx = dy · W (the input
// gradients of frozen weights, for training). The fast path feeds the
// weight to matmulFast a block of rows at a time: dense float32 weights in
// place, 2-byte and quantized ones widened or dequantized into a per-call
// block of about blockBytes (natural column order), so no quantized weight
// is ever dequantized whole.

// lineartBlockBytes bounds the dequantized weight block.
const lineartBlockBytes = 2 << 20

func (b *Backend) LinearT(dy tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	w, ok := b.checkLinear("LinearT", l)
	if !ok || !b.ok("LinearT", dy) {
		return empty
	}
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
	if rows == 0 {
		return
	}
	if b.opt.Plain {
		linearTPlain(w, e, dy, rows, dx)
		return
	}
	if w.dense != nil {
		b.matmulFast(dy, w.dense[e*w.out*w.in:], []matmulJob{{0, 0, 0}}, rows, w.out, w.in, dx)
		return
	}
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
	fast := w.fastLayout() && w.quantized()
	b.pool.run(n, 8, func(lo, hi int) {
		var sbuf []float32
		if fast {
			sbuf = make([]float32, 2*w.groups)
		}
		for i := lo; i < hi; i++ {
			row := dst[i*w.in : (i+1)*w.in]
			if !fast {
				w.row(e, o0+i, row)
				continue
			}
			w.segment(e, o0+i, 0, w.in, row, sbuf)
			if w.l.Bits == 4 {
				unpermuteQ4(row)
			}
		}
	})
}

// unpermuteQ4 puts a row dequantized by deq4 (out[64j+8k+i] is weight
// 64j+8i+k) back in natural order: an 8×8 transpose per 64 values.
func unpermuteQ4(row []float32) {
	var tmp [64]float32
	for j := 0; j+64 <= len(row); j += 64 {
		blk := row[j : j+64]
		for k := 0; k < 8; k++ {
			for i := 0; i < 8; i++ {
				tmp[8*i+k] = blk[8*k+i]
			}
		}
		copy(blk, tmp[:])
	}
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
