package autodiff

import (
	"math"

	"perch/engine/tensor"
)

// Neural-network ops and their gradients. Weights (tensor.Linear) are
// frozen: only inputs get gradients, through the backend's transposed ops.

// swapLast transposes the last two axes.
func (t *Tape) swapLast(x tensor.Tensor) tensor.Tensor {
	r := len(x.Shape())
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = r-1, r-2
	return t.b.Transpose(x, perm...)
}

// MatMul: da = g·bᵀ, db = aᵀ·g (summed over broadcast batch axes). Each
// is computed as written or transposed, (b·gᵀ)ᵀ and (gᵀ·a)ᵀ, whichever
// copies fewer values: for a LoRA update x·A the gradient of A then
// transposes the thin g and result instead of the activations x.
func (t *Tape) MatMul(a, b tensor.Tensor) tensor.Tensor {
	av, an := un(a)
	bv, bn := un(b)
	y := t.b.MatMul(av, bv)
	return t.record(y, []*Var{an, bn}, func(g tensor.Tensor) []tensor.Tensor {
		bb := t.b
		out := []tensor.Tensor{nil, nil}
		gs := tensor.Size(g)
		if an != nil {
			if tensor.Size(bv) <= gs+tensor.Size(av) {
				out[0] = bb.MatMul(g, t.swapLast(bv))
			} else {
				out[0] = t.swapLast(bb.MatMul(bv, t.swapLast(g)))
			}
			out[0] = t.unbroadcast(out[0], av.Shape())
		}
		if bn != nil {
			if tensor.Size(av) <= gs+tensor.Size(bv) {
				out[1] = bb.MatMul(t.swapLast(av), g)
			} else {
				out[1] = t.swapLast(bb.MatMul(t.swapLast(g), av))
			}
			out[1] = t.unbroadcast(out[1], bv.Shape())
		}
		return out
	})
}

// frozen fails the tape if a weight of l depends on a parameter.
func (t *Tape) frozen(op string, l *tensor.Linear) bool {
	if l == nil {
		return true
	}
	for _, w := range []tensor.Tensor{l.W, l.Scales, l.Biases, l.Bias} {
		if _, ok := w.(*Var); ok {
			t.fail("%s: weights are frozen; a weight that depends on a parameter is not supported", op)
			return false
		}
	}
	return true
}

// noBias is l without its bias (the transposes never add it).
func noBias(l *tensor.Linear) *tensor.Linear {
	if l.Bias == nil {
		return l
	}
	c := *l
	c.Bias = nil
	return &c
}

func (t *Tape) Linear(x tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	t.frozen("Linear", l)
	xv, xn := un(x)
	y := t.b.Linear(xv, l)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.b.LinearT(g, l)}
	})
}

func (t *Tape) LinearT(dy tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	t.frozen("LinearT", l)
	dv, dn := un(dy)
	y := t.b.LinearT(dv, l)
	return t.record(y, []*Var{dn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.b.Linear(g, noBias(l))}
	})
}

// GatherLinear: dx = GatherLinearT(g), summed over the K slots when x
// has one row per token (broadcast over the experts).
func (t *Tape) GatherLinear(x tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	t.frozen("GatherLinear", l)
	xv, xn := un(x)
	iv := Value(idx)
	y := t.b.GatherLinear(xv, l, iv)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		gx := t.b.GatherLinearT(g, l, iv)
		if xv.Shape()[1] == 1 && gx.Shape()[1] != 1 {
			gx = t.b.Sum(gx, 1, true)
		}
		return []tensor.Tensor{gx}
	})
}

func (t *Tape) GatherLinearT(dy tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	t.frozen("GatherLinearT", l)
	dv, dn := un(dy)
	iv := Value(idx)
	y := t.b.GatherLinearT(dv, l, iv)
	return t.record(y, []*Var{dn}, func(g tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{t.b.GatherLinear(g, noBias(l), iv)}
	})
}

// Embedding rows of a frozen table are constants.
func (t *Tape) Embedding(l *tensor.Linear, ids tensor.Tensor) tensor.Tensor {
	t.frozen("Embedding", l)
	return t.b.Embedding(l, Value(ids))
}

// RMSNorm: with r = rsqrt(mean(x²) + eps) and gw = g·w,
// dx = r·(gw − x·r²·mean(gw·x)), dw = Σ_rows g·x·r.
func (t *Tape) RMSNorm(x, w tensor.Tensor, eps float32) tensor.Tensor {
	xv, xn := un(x)
	var wv tensor.Tensor
	var wn *Var
	if w != nil {
		wv, wn = un(w)
	}
	y := t.b.RMSNorm(xv, wv, eps)
	return t.record(y, []*Var{xn, wn}, func(g tensor.Tensor) []tensor.Tensor {
		b := t.b
		r := b.Rsqrt(b.Add(b.Mean(b.Mul(xv, xv), -1, true), b.Scalar(float64(eps), xv.DType())))
		out := []tensor.Tensor{nil, nil}
		gw := g
		if wv != nil {
			gw = b.Mul(g, wv)
		}
		if f := t.fused(); xn != nil && f != nil {
			out[0] = f.RMSNormGrad(xv, wv, g, eps)
		} else if xn != nil {
			dot := b.Mean(b.Mul(gw, xv), -1, true)
			out[0] = b.Mul(r, b.Sub(gw, b.Mul(xv, b.Mul(b.Mul(r, r), dot))))
		}
		if wn != nil {
			d := wv.Shape()
			gwt := b.Reshape(b.Mul(g, b.Mul(xv, r)), -1, d[len(d)-1])
			out[1] = b.Reshape(b.Sum(gwt, 0, false), d...)
		}
		return out
	})
}

func (t *Tape) LayerNorm(x, w, bias tensor.Tensor, eps float32) tensor.Tensor {
	t.noGrad("LayerNorm", x, w, bias)
	var wv, bv tensor.Tensor
	if w != nil {
		wv = Value(w)
	}
	if bias != nil {
		bv = Value(bias)
	}
	return t.b.LayerNorm(Value(x), wv, bv, eps)
}

// RoPE is a rotation R per pair; its transpose is R(−θ) = J·R(θ)·J with J
// negating the second element of every rotated pair, so the gradient is
// J·RoPE(J·g) on the same positions (identity pairs, +Inf frequencies,
// stay identities).
func (t *Tape) RoPE(x tensor.Tensor, dims int, traditional bool, base, scale float32, offset int, freqs tensor.Tensor) tensor.Tensor {
	t.noGrad("RoPE frequencies", freqs)
	xv, xn := un(x)
	fv := freqs
	if freqs != nil {
		fv = Value(freqs)
	}
	y := t.b.RoPE(xv, dims, traditional, base, scale, offset, fv)
	return t.record(y, []*Var{xn}, func(g tensor.Tensor) []tensor.Tensor {
		D := xv.Shape()[len(xv.Shape())-1]
		sign := make([]float32, D)
		for i := range sign {
			sign[i] = 1
			if i < dims && ((traditional && i%2 == 1) || (!traditional && i >= dims/2)) {
				sign[i] = -1
			}
		}
		j := t.b.FromFloat32(sign, []int{D}, g.DType())
		return []tensor.Tensor{t.b.Mul(t.b.RoPE(t.b.Mul(g, j), dims, traditional, base, scale, offset, fv), j)}
	})
}

// SDPA runs the backend's attention forward; its gradient recomputes the
// probabilities in float32 with batched matmuls, the query heads of each
// KV head stacked as rows ([B, Hkv, G·L, D]):
//
//	P = softmax(q·kᵀ·scale + mask), dv = Pᵀ·dO, dP = dO·vᵀ,
//	dS = P·(dP − Σ dP·P), dq = dS·k·scale, dk = dSᵀ·q·scale.
func (t *Tape) SDPA(q, k, v tensor.Tensor, scale float32, mask tensor.Mask) tensor.Tensor {
	t.noGrad("SDPA mask", mask.Array)
	qv, qn := un(q)
	kv, kn := un(k)
	vv, vn := un(v)
	m := tensor.Mask{Kind: mask.Kind, Array: mask.Array}
	if m.Array != nil {
		m.Array = Value(m.Array)
	}
	y := t.b.SDPA(qv, kv, vv, scale, m)
	return t.record(y, []*Var{qn, kn, vn}, func(g tensor.Tensor) []tensor.Tensor {
		return t.sdpaBack(g, qv, kv, vv, scale, m)
	})
}

func (t *Tape) sdpaBack(g, q, k, v tensor.Tensor, scale float32, mask tensor.Mask) []tensor.Tensor {
	b := t.b
	f32 := tensor.Float32
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	B, Hq, L, D := qs[0], qs[1], qs[2], qs[3]
	Hk, S, Dv := ks[1], ks[2], vs[3]
	G := Hq / Hk
	dt := q.DType()
	q32, k32, v32, g32 := b.AsType(q, f32), b.AsType(k, f32), b.AsType(v, f32), b.AsType(g, f32)
	qg := b.Reshape(q32, B, Hk, G*L, D)
	sc := b.Scalar(float64(scale), f32)
	s := b.Mul(b.MatMul(qg, t.swapLast(k32)), sc) // [B, Hk, G·L, S]
	if add := t.additiveMask(mask, L, S); add != nil {
		s = b.Reshape(b.Add(b.Reshape(s, B, Hq, L, S), add), B, Hk, G*L, S)
	}
	p := b.Softmax(s, -1)
	gO := b.Reshape(g32, B, Hk, G*L, Dv)
	dv := b.MatMul(t.swapLast(p), gO)
	dp := b.MatMul(gO, t.swapLast(v32))
	ds := t.softmaxGrad(p, dp)
	ds = b.Mul(ds, sc)
	dq := b.Reshape(b.MatMul(ds, k32), B, Hq, L, D)
	dk := b.MatMul(t.swapLast(ds), qg)
	return []tensor.Tensor{b.AsType(dq, dt), b.AsType(dk, k.DType()), b.AsType(dv, v.DType())}
}

// additiveMask is mask as 0 / −Inf float32 scores to add (nil for none).
func (t *Tape) additiveMask(mask tensor.Mask, L, S int) tensor.Tensor {
	b := t.b
	switch mask.Kind {
	case tensor.MaskCausal:
		vis := make([]bool, L*S)
		for l := 0; l < L; l++ {
			for s := 0; s <= S-L+l && s < S; s++ {
				vis[l*S+s] = true
			}
		}
		mask.Array = b.FromBool(vis, []int{L, S})
	case tensor.MaskArray:
	default:
		return nil
	}
	if mask.Array.DType() != tensor.Bool {
		return b.AsType(mask.Array, tensor.Float32)
	}
	return b.Where(mask.Array, b.Scalar(0, tensor.Float32), b.Scalar(math.Inf(-1), tensor.Float32))
}

func (t *Tape) Conv1D(x, w tensor.Tensor, stride, padding, groups int) tensor.Tensor {
	t.noGrad("Conv1D", x, w)
	return t.b.Conv1D(Value(x), Value(w), stride, padding, groups)
}

func (t *Tape) Conv2D(x, w tensor.Tensor, strideH, strideW, padH, padW int) tensor.Tensor {
	t.noGrad("Conv2D", x, w)
	return t.b.Conv2D(Value(x), Value(w), strideH, strideW, padH, padW)
}

// softmaxGrad is y·(g − Σ g·y) over the last axis.
func (t *Tape) softmaxGrad(y, g tensor.Tensor) tensor.Tensor {
	if f := t.fused(); f != nil {
		return f.SoftmaxGrad(y, g)
	}
	b := t.b
	return b.Mul(y, b.Sub(g, b.Sum(b.Mul(g, y), -1, true)))
}
