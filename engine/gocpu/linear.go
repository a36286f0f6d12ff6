package gocpu

import (
	"perch/engine/tensor"
)

// weight is a checked view of a tensor.Linear for expert e (0 if not stacked).
// Dense weights and quantization scales loaded at 2 bytes stay there
// (denseH, scalesH, biasesH; f16 for IEEE half, else bfloat16) and are
// widened by the kernels as they read them.
type weight struct {
	l        *tensor.Linear
	in, out  int
	dense    []float32 // [out, in] when not quantized
	denseH   []uint16  // or 2-byte [out, in]
	packed   []uint32  // [out, in*bits/32]
	scales   []float32 // [out, in/group]
	biases   []float32
	scalesH  []uint16 // or 2-byte scales and biases
	biasesH  []uint16
	f16      bool      // 2-byte values are IEEE half
	bias     []float32 // [out] or nil
	words    int       // packed words per row
	groups   int       // groups per row
	experts  int
	perWords int // words per expert
}

func (b *Backend) checkLinear(op string, l *tensor.Linear) (*weight, bool) {
	if l == nil || l.W == nil {
		b.fail(op, "missing weight")
		return nil, false
	}
	ts := []tensor.Tensor{l.W}
	if l.Quantized() {
		if l.Scales == nil || l.Biases == nil {
			b.fail(op, "quantized weight without scales/biases")
			return nil, false
		}
		ts = append(ts, l.Scales, l.Biases)
	}
	if l.Bias != nil {
		ts = append(ts, l.Bias)
	}
	if !b.ok(op, ts...) {
		return nil, false
	}
	w := &weight{l: l, in: l.In, out: l.Out}
	tw := l.W.(*T)
	rank := len(tw.shape)
	if rank < 2 || l.In <= 0 || l.Out <= 0 || tw.shape[rank-2] != l.Out {
		b.fail(op, "weight %v does not match Out=%d In=%d", tw.shape, l.Out, l.In)
		return nil, false
	}
	w.experts = 1
	if rank == 3 {
		w.experts = tw.shape[0]
	}
	if l.Quantized() {
		if (l.Bits != 4 && l.Bits != 8) || l.GroupSize <= 0 || l.In%l.GroupSize != 0 || l.In*l.Bits%32 != 0 {
			b.fail(op, "unsupported quantization: %d bits, group %d, In %d", l.Bits, l.GroupSize, l.In)
			return nil, false
		}
		w.words, w.groups = l.In*l.Bits/32, l.In/l.GroupSize
		ts, tb := l.Scales.(*T), l.Biases.(*T)
		if tw.dt != tensor.Uint32 || tw.shape[rank-1] != w.words || ts.size() != w.experts*l.Out*w.groups || tb.size() != ts.size() {
			b.fail(op, "packed weight %v / scales %v do not match %d-bit In=%d Out=%d", tw.shape, ts.shape, l.Bits, l.In, l.Out)
			return nil, false
		}
		w.packed = tw.u
		if ts.h != nil && tb.h != nil && ts.f16 == tb.f16 {
			w.scalesH, w.biasesH, w.f16 = ts.h, tb.h, ts.f16
		} else {
			w.scales, w.biases = asFloats(ts), asFloats(tb)
		}
		w.perWords = l.Out * w.words
	} else {
		if tw.shape[rank-1] != l.In || !tw.dt.IsFloat() {
			b.fail(op, "dense weight %v %v does not match In=%d", tw.shape, tw.dt, l.In)
			return nil, false
		}
		if tw.h != nil {
			w.denseH, w.f16 = tw.h, tw.f16
		} else {
			w.dense = tw.f
		}
	}
	if l.Bias != nil {
		w.bias = asFloats(l.Bias.(*T))
		if len(w.bias) != w.experts*l.Out {
			b.fail(op, "bias has %d values for Out=%d", len(w.bias), l.Out)
			return nil, false
		}
	}
	return w, true
}

// quantized reports whether w holds packed weights.
func (w *weight) quantized() bool { return w.l.Bits != 0 }

// affine returns the scales and biases [g0, g1) (group indices over all
// rows, experts stacked), widened into s and b when stored at 2 bytes (s
// and b then need g1-g0 room).
func (w *weight) affine(g0, g1 int, s, b []float32) ([]float32, []float32) {
	if w.scalesH == nil {
		return w.scales[g0:g1], w.biases[g0:g1]
	}
	s, b = s[:g1-g0], b[:g1-g0]
	widen(s, w.scalesH[g0:g1], w.f16)
	widen(b, w.biasesH[g0:g1], w.f16)
	return s, b
}

// row dequantizes (or copies) row o of expert e into dst [in].
func (w *weight) row(e, o int, dst []float32) {
	r := e*w.out + o
	switch {
	case w.dense != nil:
		copy(dst, w.dense[r*w.in:][:w.in])
		return
	case w.denseH != nil:
		widen(dst[:w.in], w.denseH[r*w.in:], w.f16)
		return
	}
	bits := w.l.Bits
	per := 32 / bits
	mask := uint32(1)<<bits - 1
	gs := w.l.GroupSize
	words := w.packed[r*w.words:][:w.words]
	sc, bi := w.affine(r*w.groups, (r+1)*w.groups, make([]float32, w.groups), make([]float32, w.groups))
	for j := 0; j < w.in; j++ {
		q := words[j/per] >> (uint(j%per) * uint(bits)) & mask
		g := j / gs
		dst[j] = float32(q)*sc[g] + bi[g]
	}
}

func (b *Backend) Linear(x tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	w, ok := b.checkLinear("Linear", l)
	if !ok || !b.ok("Linear", x) {
		return empty
	}
	b.resident(w)
	tx := x.(*T)
	if len(tx.shape) == 0 || tx.shape[len(tx.shape)-1] != w.in || w.experts != 1 {
		return b.fail("Linear", "input %v for weight In=%d (experts %d)", tx.shape, w.in, w.experts)
	}
	in := asFloats(tx)
	rows := len(in) / w.in
	outShape := append(cloneShape(tx.shape[:len(tx.shape)-1]), w.out)
	r := newF(outShape...)
	if rows == 1 {
		decodeReads.Add(int64(w.out) * w.rowBytes())
	}
	if b.opt.Plain {
		linearPlain(w, 0, in, rows, r.f)
	} else {
		b.linearFast(w, in, rows, r.f)
	}
	if w.bias != nil {
		for row := 0; row < rows; row++ {
			o := r.f[row*w.out:][:w.out]
			for c := range o {
				o[c] += w.bias[c]
			}
		}
	}
	return r
}

// linearPlain: y[r, o] = sum_k x[r, k] * W[o, k], row by row, in order.
func linearPlain(w *weight, e int, x []float32, rows int, y []float32) {
	buf := make([]float32, w.in)
	for o := 0; o < w.out; o++ {
		w.row(e, o, buf)
		for r := 0; r < rows; r++ {
			xr := x[r*w.in:][:w.in]
			var s float32
			for k, v := range xr {
				s += v * buf[k]
			}
			y[r*w.out+o] = s
		}
	}
}

func (b *Backend) GatherLinear(x tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	w, ok := b.checkLinear("GatherLinear", l)
	if !ok || !b.ok("GatherLinear", x, idx) {
		return empty
	}
	b.resident(w)
	tx, ti := x.(*T), idx.(*T)
	if len(tx.shape) != 3 || len(ti.shape) != 2 || tx.shape[0] != ti.shape[0] || tx.shape[2] != w.in ||
		(tx.shape[1] != 1 && tx.shape[1] != ti.shape[1]) {
		return b.fail("GatherLinear", "x %v, idx %v for In=%d", tx.shape, ti.shape, w.in)
	}
	ids, ok := b.indices("GatherLinear", ti, w.experts)
	if !ok {
		return empty
	}
	N, K, kx := ti.shape[0], ti.shape[1], tx.shape[1]
	if N == 1 {
		used := map[int]bool{}
		for _, e := range ids {
			used[e] = true
		}
		decodeReads.Add(int64(len(used)*w.out) * w.rowBytes())
	}
	in := asFloats(tx)
	r := newF(N, K, w.out)
	if b.opt.Plain {
		b.pool.run(N*K, 1, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				n, j := p/K, p%K
				linearPlain(w, ids[p], in[(n*kx+min(j, kx-1))*w.in:][:w.in], 1, r.f[p*w.out:][:w.out])
			}
		})
	} else {
		b.gatherLinear(w, ids, in, K, kx, r.f)
	}
	if w.bias != nil {
		for p, e := range ids {
			y := r.f[p*w.out:][:w.out]
			for c := range y {
				y[c] += w.bias[e*w.out+c]
			}
		}
	}
	return r
}

func (b *Backend) Embedding(l *tensor.Linear, ids tensor.Tensor) tensor.Tensor {
	w, ok := b.checkLinear("Embedding", l)
	if !ok || !b.ok("Embedding", ids) {
		return empty
	}
	b.residentIfCopied(w)
	ti := ids.(*T)
	rows, ok := b.indices("Embedding", ti, w.out)
	if !ok {
		return empty
	}
	r := newF(append(cloneShape(ti.shape), w.in)...)
	if len(rows) == 1 {
		decodeReads.Add(w.rowBytes())
	}
	for k, id := range rows {
		w.row(0, id, r.f[k*w.in:][:w.in])
	}
	return r
}
