package gocpu

import "perch/engine/tensor"

// Softcap is c·tanh(x/c) (tensor.Fused): the division, the fast path's
// tanh and the product run chunk by chunk while the chunk is in cache,
// one output and no intermediates, with the bits of Div, Tanh and Mul by
// a scalar. The plain backend and 2-byte inputs take those three ops.
func (b *Backend) Softcap(x tensor.Tensor, c float32) tensor.Tensor {
	if t, ok := x.(*T); b.opt.Plain || !ok || t.h != nil || t.dt != tensor.Float32 {
		capT := b.Scalar(float64(c), x.DType())
		return b.Mul(b.Tanh(b.Div(x, capT)), capT)
	}
	if !b.ok("Softcap", x) {
		return empty
	}
	tx := x.(*T)
	r := newF(tx.shape...)
	b.pool.run(len(r.f), 1<<14, func(lo, hi int) {
		for k := lo; k < hi; k += 1 << 12 {
			d := r.f[k:min(k+1<<12, hi)]
			arithScalar('/', tx.f[k:k+len(d)], c, d)
			kern.tanh(d)
			arithScalar('*', d, c, d)
		}
	})
	return r
}

// GeluMul is GeluTanh(g)·u (tensor.Fused) chunk by chunk while the chunk
// is in cache: one output, no intermediate, the bits of GeluTanh and Mul.
// The plain backend, 2-byte inputs and differing shapes take those ops.
func (b *Backend) GeluMul(g, u tensor.Tensor) tensor.Tensor {
	tg, ok1 := g.(*T)
	tu, ok2 := u.(*T)
	if b.opt.Plain || !ok1 || !ok2 || tg.h != nil || tu.h != nil || tg.dt != tensor.Float32 || tu.dt != tensor.Float32 || !sameShape(tg.shape, tu.shape) {
		return b.Mul(b.GeluTanh(g), u)
	}
	if !b.ok("GeluMul", g, u) {
		return empty
	}
	r := newF(tg.shape...)
	// a decode step's MLP (6144 or 12288 wide) is split among the workers
	b.pool.run(len(r.f), 1<<12, func(lo, hi int) {
		for k := lo; k < hi; k += 1 << 12 {
			d := r.f[k:min(k+1<<12, hi)]
			copy(d, tg.f[k:])
			geluTanhVec(d)
			arithVec('*', d, tu.f[k:k+len(d)], d)
		}
	})
	return r
}
