package gocpu

import (
	"math"

	"perch/engine/tensor"
)

// Fused gradients for training (engine/autodiff uses them when a backend
// has them): one pass each instead of a chain of elementwise ops.

var _ tensor.Fused = (*Backend)(nil)

// GeluTanhGrad is g·gelu_tanh'(x), x and g of one shape.
func (b *Backend) GeluTanhGrad(x, g tensor.Tensor) tensor.Tensor {
	if !b.ok("GeluTanhGrad", x, g) {
		return empty
	}
	tx, tg := x.(*T), g.(*T)
	if !sameShape(tx.shape, tg.shape) {
		return b.fail("GeluTanhGrad", "x %v and gradient %v differ", tx.shape, tg.shape)
	}
	xs, gs := asFloats(tx), asFloats(tg)
	r := newF(tx.shape...)
	b.pool.run(len(xs), 4096, func(lo, hi int) {
		var th [256]float32
		for k0 := lo; k0 < hi; k0 += len(th) {
			xb := xs[k0:min(k0+len(th), hi)]
			t := th[:len(xb)]
			for i, v := range xb {
				t[i] = float32(sqrt2OverPi) * (v + 0.044715*v*v*v)
			}
			kern.tanh(t)
			out, gb := r.f[k0:k0+len(xb)], gs[k0:k0+len(xb)]
			for i, v := range xb {
				du := float32(sqrt2OverPi) * (1 + 3*0.044715*v*v)
				out[i] = gb[i] * (0.5*(1+t[i]) + 0.5*v*(1-t[i]*t[i])*du)
			}
		}
	})
	return r
}

// RMSNormGrad is the input gradient of RMSNorm(x, w, eps) (w may be nil):
// with r = rsqrt(mean(x²) + eps) and gw = g·w, r·(gw − x·r²·mean(gw·x)) per
// row of the last axis (sums in float64).
func (b *Backend) RMSNormGrad(x, w, g tensor.Tensor, eps float32) tensor.Tensor {
	args := []tensor.Tensor{x, g}
	if w != nil {
		args = append(args, w)
	}
	if !b.ok("RMSNormGrad", args...) {
		return empty
	}
	tx, tg := x.(*T), g.(*T)
	if !sameShape(tx.shape, tg.shape) || len(tx.shape) == 0 {
		return b.fail("RMSNormGrad", "x %v and gradient %v differ", tx.shape, tg.shape)
	}
	d := tx.shape[len(tx.shape)-1]
	var wf []float32
	if w != nil {
		if wf = asFloats(w.(*T)); len(wf) != d {
			return b.fail("RMSNormGrad", "weight of %d for rows of %d", len(wf), d)
		}
	}
	xs, gs := asFloats(tx), asFloats(tg)
	r := newF(tx.shape...)
	b.pool.run(len(xs)/max(d, 1), max(1, 8192/max(d, 1)), func(lo, hi int) {
		gw := make([]float32, d)
		for row := lo; row < hi; row++ {
			xr, gr, out := xs[row*d:(row+1)*d], gs[row*d:(row+1)*d], r.f[row*d:(row+1)*d]
			var ss, dot float64
			for c, v := range xr {
				gw[c] = gr[c]
				if wf != nil {
					gw[c] *= wf[c]
				}
				ss += float64(v) * float64(v)
				dot += float64(gw[c]) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(d)+float64(eps))
			k := float32(inv * inv * inv * dot / float64(d))
			ri := float32(inv)
			for c, v := range xr {
				out[c] = ri*gw[c] - v*k
			}
		}
	})
	return r
}

// SoftmaxGrad is y·(g − Σ g·y) over the last axis, y a softmax output.
func (b *Backend) SoftmaxGrad(y, g tensor.Tensor) tensor.Tensor {
	if !b.ok("SoftmaxGrad", y, g) {
		return empty
	}
	ty, tg := y.(*T), g.(*T)
	if !sameShape(ty.shape, tg.shape) || len(ty.shape) == 0 {
		return b.fail("SoftmaxGrad", "y %v and gradient %v differ", ty.shape, tg.shape)
	}
	d := ty.shape[len(ty.shape)-1]
	ys, gs := asFloats(ty), asFloats(tg)
	r := newF(ty.shape...)
	b.pool.run(len(ys)/max(d, 1), max(1, 8192/max(d, 1)), func(lo, hi int) {
		for row := lo; row < hi; row++ {
			yr, gr, out := ys[row*d:(row+1)*d], gs[row*d:(row+1)*d], r.f[row*d:(row+1)*d]
			var s float64
			for c, v := range yr {
				s += float64(v) * float64(gr[c])
			}
			sf := float32(s)
			for c, v := range yr {
				out[c] = v * (gr[c] - sf)
			}
		}
	})
	return r
}

// TakeAlongGrad scatters g [.., K] back into zeros of shape [.., D] at the
// indices idx [.., K] of the last axis (repeats add): TakeAlong's
// gradient along the last axis.
func (b *Backend) TakeAlongGrad(g, idx tensor.Tensor, shape []int) tensor.Tensor {
	if !b.ok("TakeAlongGrad", g, idx) {
		return empty
	}
	tg, ti := g.(*T), idx.(*T)
	r := len(shape)
	if r == 0 || len(tg.shape) != r || !sameShape(tg.shape, ti.shape) || !sameShape(tg.shape[:r-1], shape[:r-1]) {
		return b.fail("TakeAlongGrad", "gradient %v, indices %v for shape %v", tg.shape, ti.shape, shape)
	}
	D, K := shape[r-1], tg.shape[r-1]
	ids, ok := b.indices("TakeAlongGrad", ti, D)
	if !ok {
		return empty
	}
	gs := asFloats(tg)
	out := newF(shape...)
	for row := 0; row*K < len(gs); row++ {
		for k := 0; k < K; k++ {
			out.f[row*D+ids[row*K+k]] += gs[row*K+k]
		}
	}
	return out
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
