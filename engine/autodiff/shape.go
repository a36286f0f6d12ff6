package autodiff

import "perch/engine/tensor"

// Shape ops, gathers and reductions, and their gradients.

func normAxis(axis, rank int) int {
	if axis < 0 {
		axis += rank
	}
	return axis
}

func (t *Tape) Reshape(x tensor.Tensor, shape ...int) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Reshape(xv, shape...)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.b.Reshape(g, xv.Shape()...)}
	})
}

func (t *Tape) Transpose(x tensor.Tensor, perm ...int) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Transpose(xv, perm...)
	rank := len(xv.Shape())
	p := perm
	if len(p) == 0 {
		p = make([]int, rank)
		for i := range p {
			p[i] = rank - 1 - i
		}
	}
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		inv := make([]int, rank)
		for i, a := range p {
			inv[normAxis(a, rank)] = i
		}
		return []tensor.Tensor{t.b.Transpose(g, inv...)}
	})
}

// Slice: the gradient is g padded back with zeros.
func (t *Tape) Slice(x tensor.Tensor, axis, start, end int) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Slice(xv, axis, start, end)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		a := normAxis(axis, len(xv.Shape()))
		d := xv.Shape()[a]
		s, e := start, end
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		e = min(e, d)
		return []tensor.Tensor{t.b.Pad(g, a, s, d-e, 0)}
	})
}

// Concat: each input gets its slice of g.
func (t *Tape) Concat(axis int, xs ...tensor.Tensor) tensor.Tensor {
	vals := make([]tensor.Tensor, len(xs))
	ps := make([]*Var, len(xs))
	for i, x := range xs {
		vals[i], ps[i] = un(x)
	}
	y := t.b.Concat(axis, vals...)
	return t.record(y, ps, func(g tensor.Tensor) []tensor.Tensor {
		a := normAxis(axis, len(y.Shape()))
		out := make([]tensor.Tensor, len(xs))
		off := 0
		for i, v := range vals {
			n := v.Shape()[a]
			if ps[i] != nil {
				out[i] = t.b.Slice(g, a, off, off+n)
			}
			off += n
		}
		return out
	})
}

// SliceUpdate: src gets its window of g, dst the rest (its window zeroed,
// built by concatenation so that g itself is never updated in place).
func (t *Tape) SliceUpdate(dst, src tensor.Tensor, axis, start int) tensor.Tensor {
	dv, dn := un(dst)
	sv, sn := un(src)
	a := normAxis(axis, len(dv.Shape()))
	n, d := sv.Shape()[a], dv.Shape()[a]
	y := t.b.SliceUpdate(dv, sv, axis, start)
	return t.record(y, []*Var{dn, sn}, func(g tensor.Tensor) []tensor.Tensor {
		out := []tensor.Tensor{nil, nil}
		if sn != nil {
			out[1] = t.b.Slice(g, a, start, start+n)
		}
		if dn != nil {
			parts := []tensor.Tensor{}
			if start > 0 {
				parts = append(parts, t.b.Slice(g, a, 0, start))
			}
			parts = append(parts, t.b.Zeros(sv.Shape(), g.DType()))
			if start+n < d {
				parts = append(parts, t.b.Slice(g, a, start+n, d))
			}
			out[0] = t.b.Concat(a, parts...)
		}
		return out
	})
}

func (t *Tape) Pad(x tensor.Tensor, axis, before, after int, value float64) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Pad(xv, axis, before, after, value)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		a := normAxis(axis, len(xv.Shape()))
		return []tensor.Tensor{t.b.Slice(g, a, before, before+xv.Shape()[a])}
	})
}

// iota is the int32 tensor 0..n-1.
func (t *Tape) iota(n int) tensor.Tensor {
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(i)
	}
	return t.b.FromInt32(v, []int{n})
}

// Take: the gradient scatters g back by a one-hot product, onehotᵀ · g
// over the gathered axis (a GEMM; the model only takes from constants).
func (t *Tape) Take(x, idx tensor.Tensor, axis int) tensor.Tensor {
	xv, xn := un(x)
	iv := Value(idx)
	y := t.b.Take(xv, iv, axis)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		b := t.b
		xs := xv.Shape()
		a := normAxis(axis, len(xs))
		D, m := xs[a], tensor.Size(iv)
		pre, post := 1, 1
		for _, s := range xs[:a] {
			pre *= s
		}
		for _, s := range xs[a+1:] {
			post *= s
		}
		// g [pre, m, post] -> [pre, post, m]; onehot [m, D]; (g · onehot) [pre, post, D].
		gm := b.Transpose(b.Reshape(g, pre, m, post), 0, 2, 1)
		oh := b.AsType(b.Equal(b.Reshape(iv, m, 1), t.iota(D)), g.DType())
		gx := b.MatMul(gm, oh)
		gx = b.Transpose(gx, 0, 2, 1)
		return []tensor.Tensor{b.Reshape(gx, xs...)}
	})
}

// TakeAlong: the gradient is Σ over the gathered slots of a one-hot
// scatter, Where(idx == iota, g, 0), along the gathered axis.
func (t *Tape) TakeAlong(x, idx tensor.Tensor, axis int) tensor.Tensor {
	xv, xn := un(x)
	iv := Value(idx)
	y := t.b.TakeAlong(xv, iv, axis)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		b := t.b
		xs := xv.Shape()
		r := len(xs)
		a := normAxis(axis, r)
		// Move the axis last: x [.., D], idx and g [.., K].
		perm := make([]int, 0, r)
		for i := 0; i < r; i++ {
			if i != a {
				perm = append(perm, i)
			}
		}
		perm = append(perm, a)
		if f := t.fused(); f != nil && a == r-1 && sameShape(iv.Shape(), g.Shape()) && sameShape(g.Shape()[:r-1], xs[:r-1]) {
			return []tensor.Tensor{f.TakeAlongGrad(g, iv, xs)}
		}
		gi, ii := g, iv
		if a != r-1 {
			gi, ii = b.Transpose(g, perm...), b.Transpose(iv, perm...)
		}
		lead := gi.Shape()[:r-1]
		K, D := gi.Shape()[r-1], xs[a]
		withOne := func(v tensor.Tensor) tensor.Tensor {
			return b.Reshape(v, append(append(append([]int{}, lead...), K), 1)...)
		}
		oh := b.Equal(withOne(ii), t.iota(D)) // [.., K, D]
		gx := b.Sum(b.Where(oh, withOne(gi), t.scalar(0, g)), r-1, false)
		gx = t.unbroadcast(gx, permuted(xs, perm))
		if a != r-1 {
			inv := make([]int, r)
			for i, p := range perm {
				inv[p] = i
			}
			gx = b.Transpose(gx, inv...)
		}
		return []tensor.Tensor{gx}
	})
}

func permuted(s, perm []int) []int {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[i] = s[p]
	}
	return out
}

// expand broadcasts g (reduced over axis, kept or not) back to shape.
func (t *Tape) expand(g tensor.Tensor, axis int, keep bool, shape []int) tensor.Tensor {
	if !keep {
		s := append([]int{}, shape...)
		s[axis] = 1
		g = t.b.Reshape(g, s...)
	}
	return t.b.Add(t.b.Zeros(shape, g.DType()), g)
}

func (t *Tape) Sum(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Sum(xv, axis, keepDims)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.expand(g, normAxis(axis, len(xv.Shape())), keepDims, xv.Shape())}
	})
}

func (t *Tape) Mean(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Mean(xv, axis, keepDims)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		a := normAxis(axis, len(xv.Shape()))
		g = t.b.Mul(g, t.scalar(1/float64(xv.Shape()[a]), g))
		return []tensor.Tensor{t.expand(g, a, keepDims, xv.Shape())}
	})
}

// Max sends g to the maxima, split evenly between ties (as MLX does).
func (t *Tape) Max(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Max(xv, axis, keepDims)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		b := t.b
		a, yk, g := t.kept(xv, y, g, axis, keepDims)
		mask := b.AsType(b.Equal(xv, yk), g.DType())
		n := b.Sum(mask, a, true)
		return []tensor.Tensor{b.Mul(mask, b.Div(g, n))}
	})
}

// kept returns the normalized axis and the reduction y of x and its
// gradient g with the reduced axis kept as 1.
func (t *Tape) kept(x, y, g tensor.Tensor, axis int, keep bool) (int, tensor.Tensor, tensor.Tensor) {
	a := normAxis(axis, len(x.Shape()))
	if keep {
		return a, y, g
	}
	s := append([]int{}, x.Shape()...)
	s[a] = 1
	return a, t.b.Reshape(y, s...), t.b.Reshape(g, s...)
}

func (t *Tape) Argmax(x tensor.Tensor, axis int) tensor.Tensor  { return t.b.Argmax(Value(x), axis) }
func (t *Tape) Argsort(x tensor.Tensor, axis int) tensor.Tensor { return t.b.Argsort(Value(x), axis) }
func (t *Tape) ArgPartition(x tensor.Tensor, kth int, axis int) tensor.Tensor {
	return t.b.ArgPartition(Value(x), kth, axis)
}
func (t *Tape) Categorical(logits tensor.Tensor, seed uint64) tensor.Tensor {
	return t.b.Categorical(Value(logits), seed)
}

func (t *Tape) Cumsum(x tensor.Tensor, axis int) tensor.Tensor {
	t.noGrad("Cumsum", x)
	return t.b.Cumsum(Value(x), axis)
}

// Softmax: dx = y·(g − Σ g·y).
func (t *Tape) Softmax(x tensor.Tensor, axis int) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.Softmax(xv, axis)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		if normAxis(axis, len(y.Shape())) == len(y.Shape())-1 {
			return []tensor.Tensor{t.softmaxGrad(y, g)}
		}
		b := t.b
		return []tensor.Tensor{b.Mul(y, b.Sub(g, b.Sum(b.Mul(g, y), axis, true)))}
	})
}

// LogSumExp: dx = g·exp(x − y) (the softmax).
func (t *Tape) LogSumExp(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.LogSumExp(xv, axis, keepDims)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		b := t.b
		_, yk, g := t.kept(xv, y, g, axis, keepDims)
		return []tensor.Tensor{b.Mul(g, b.Exp(b.Sub(xv, yk)))}
	})
}
