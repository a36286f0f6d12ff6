package autodiff

import (
	"math"

	"perch/engine/tensor"
)

// Elementwise ops and their gradients. Broadcast inputs get their gradient
// summed back to their own shape (unbroadcast).

// unbroadcast sums g over the axes broadcasting added to shape.
func (t *Tape) unbroadcast(g tensor.Tensor, shape []int) tensor.Tensor {
	b := t.b
	for len(g.Shape()) > len(shape) {
		g = b.Sum(g, 0, false)
	}
	gs := g.Shape()
	for i := range shape {
		if shape[i] == 1 && gs[i] != 1 {
			g = b.Sum(g, i, true)
		}
	}
	return g
}

func (t *Tape) scalar(v float64, like tensor.Tensor) tensor.Tensor {
	return t.b.Scalar(v, like.DType())
}

// binary records op(a, b) with the gradients da(g), db(g) before unbroadcast.
func (t *Tape) binary(a, b tensor.Tensor, op func(a, b tensor.Tensor) tensor.Tensor, grads func(g, a, b, y tensor.Tensor) (tensor.Tensor, tensor.Tensor)) tensor.Tensor {
	av, an := un(a)
	bv, bn := un(b)
	y := op(av, bv)
	return t.record(y, []*Var{an, bn}, func(g tensor.Tensor) []tensor.Tensor {
		ga, gb := grads(g, av, bv, y)
		out := []tensor.Tensor{nil, nil}
		if an != nil {
			out[0] = t.unbroadcast(ga, av.Shape())
		}
		if bn != nil {
			out[1] = t.unbroadcast(gb, bv.Shape())
		}
		return out
	})
}

func (t *Tape) Add(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Add, func(g, _, _, _ tensor.Tensor) (tensor.Tensor, tensor.Tensor) { return g, g })
}

func (t *Tape) Sub(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Sub, func(g, _, _, _ tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		return g, t.b.Mul(g, t.scalar(-1, g))
	})
}

func (t *Tape) Mul(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Mul, func(g, a, b, _ tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		return t.b.Mul(g, b), t.b.Mul(g, a)
	})
}

// Div: d(a/b) = g/b, -g·y/b.
func (t *Tape) Div(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Div, func(g, a, b, y tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		ga := t.b.Div(g, b)
		return ga, t.b.Mul(t.b.Mul(ga, y), t.scalar(-1, g))
	})
}

// Maximum and Minimum send the gradient to the winner; ties split it
// evenly (as MLX does).
func (t *Tape) Maximum(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Maximum, t.pick)
}

func (t *Tape) Minimum(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Minimum, t.pick)
}

func (t *Tape) pick(g, a, b, y tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	bb := t.b
	ia := bb.AsType(bb.Equal(a, y), g.DType())
	ib := bb.AsType(bb.Equal(b, y), g.DType())
	n := bb.Add(ia, ib)
	return bb.Div(bb.Mul(g, ia), n), bb.Div(bb.Mul(g, ib), n)
}

// Pow: d(a^b) = g·b·a^(b-1), g·log(a)·y.
func (t *Tape) Pow(a, b tensor.Tensor) tensor.Tensor {
	return t.binary(a, b, t.b.Pow, func(g, a, b, y tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		bb := t.b
		ga := bb.Mul(g, bb.Mul(b, bb.Pow(a, bb.Sub(b, t.scalar(1, b)))))
		gb := bb.Mul(g, bb.Mul(bb.Log(a), y))
		return ga, gb
	})
}

func (t *Tape) Equal(a, b tensor.Tensor) tensor.Tensor { return t.b.Equal(Value(a), Value(b)) }
func (t *Tape) Less(a, b tensor.Tensor) tensor.Tensor  { return t.b.Less(Value(a), Value(b)) }
func (t *Tape) LogicalAnd(a, b tensor.Tensor) tensor.Tensor {
	return t.b.LogicalAnd(Value(a), Value(b))
}
func (t *Tape) LogicalOr(a, b tensor.Tensor) tensor.Tensor { return t.b.LogicalOr(Value(a), Value(b)) }

// Where sends g to a where cond holds, to b elsewhere.
func (t *Tape) Where(cond, a, b tensor.Tensor) tensor.Tensor {
	c := Value(cond)
	av, an := un(a)
	bv, bn := un(b)
	y := t.b.Where(c, av, bv)
	return t.record(y, []*Var{an, bn}, func(g tensor.Tensor) []tensor.Tensor {
		zero := t.scalar(0, g)
		out := []tensor.Tensor{nil, nil}
		if an != nil {
			out[0] = t.unbroadcast(t.b.Where(c, g, zero), av.Shape())
		}
		if bn != nil {
			out[1] = t.unbroadcast(t.b.Where(c, zero, g), bv.Shape())
		}
		return out
	})
}

// unary records op(x) with gradient grad(g, x, y).
func (t *Tape) unary(x tensor.Tensor, op func(tensor.Tensor) tensor.Tensor, grad func(g, x, y tensor.Tensor) tensor.Tensor) tensor.Tensor {
	xv, xn := un(x)
	y := op(xv)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor { return []tensor.Tensor{grad(g, xv, y)} })
}

func (t *Tape) Tanh(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Tanh, func(g, _, y tensor.Tensor) tensor.Tensor {
		return t.b.Mul(g, t.b.Sub(t.scalar(1, y), t.b.Mul(y, y)))
	})
}

func (t *Tape) Exp(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Exp, func(g, _, y tensor.Tensor) tensor.Tensor { return t.b.Mul(g, y) })
}

func (t *Tape) Log(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Log, func(g, x, _ tensor.Tensor) tensor.Tensor { return t.b.Div(g, x) })
}

func (t *Tape) Sin(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Sin, func(g, x, _ tensor.Tensor) tensor.Tensor { return t.b.Mul(g, t.b.Cos(x)) })
}

func (t *Tape) Cos(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Cos, func(g, x, _ tensor.Tensor) tensor.Tensor {
		return t.b.Mul(t.b.Mul(g, t.b.Sin(x)), t.scalar(-1, g))
	})
}

func (t *Tape) Sqrt(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Sqrt, func(g, _, y tensor.Tensor) tensor.Tensor {
		return t.b.Div(g, t.b.Mul(y, t.scalar(2, y)))
	})
}

// Rsqrt: d x^-1/2 = -x^-3/2 / 2 = -y/(2x).
func (t *Tape) Rsqrt(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Rsqrt, func(g, x, y tensor.Tensor) tensor.Tensor {
		return t.b.Mul(g, t.b.Mul(t.b.Div(y, x), t.scalar(-0.5, y)))
	})
}

func (t *Tape) Sigmoid(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Sigmoid, func(g, _, y tensor.Tensor) tensor.Tensor {
		return t.b.Mul(g, t.b.Mul(y, t.b.Sub(t.scalar(1, y), y)))
	})
}

func (t *Tape) Softplus(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.Softplus, func(g, x, _ tensor.Tensor) tensor.Tensor { return t.b.Mul(g, t.b.Sigmoid(x)) })
}

// GeluTanh: y = x·(1+tanh u)/2, u = c·(x + 0.044715x³), so
// dy/dx = (1+tanh u)/2 + x·(1-tanh²u)·c·(1 + 3·0.044715x²)/2.
func (t *Tape) GeluTanh(x tensor.Tensor) tensor.Tensor {
	return t.unary(x, t.b.GeluTanh, func(g, x, _ tensor.Tensor) tensor.Tensor {
		if f := t.fused(); f != nil {
			return f.GeluTanhGrad(x, g)
		}
		b := t.b
		c := math.Sqrt(2 / math.Pi)
		x2 := b.Mul(x, x)
		u := b.Mul(t.scalar(c, x), b.Add(x, b.Mul(t.scalar(0.044715, x), b.Mul(x2, x))))
		th := b.Tanh(u)
		half := t.scalar(0.5, x)
		left := b.Mul(half, b.Add(t.scalar(1, x), th))
		du := b.Mul(t.scalar(c, x), b.Add(t.scalar(1, x), b.Mul(t.scalar(3*0.044715, x), x2)))
		right := b.Mul(b.Mul(half, x), b.Mul(b.Sub(t.scalar(1, x), b.Mul(th, th)), du))
		return b.Mul(g, b.Add(left, right))
	})
}

func (t *Tape) AsType(x tensor.Tensor, dt tensor.DType) tensor.Tensor {
	xv, xn := un(x)
	y := t.b.AsType(xv, dt)
	if !dt.IsFloat() {
		return y
	}
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.b.AsType(g, xv.DType())}
	})
}
