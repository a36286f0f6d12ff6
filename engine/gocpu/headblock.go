package gocpu

import (
	"math"

	"perch/engine/tensor"
)

// SoftcapLogSoftmax is one vocabulary block of the training head (engine/
// gemma4 TargetLogProbs) in one pass per row instead of a chain of ops:
// for raw logits z [n, V] and the softcap c (none when c <= 0), with
// s = c·tanh(z/c), it returns lse [n, 1] = log Σ exp(s) and, with grad,
// pd [n, V] = softmax(s)·(1 − tanh²(z/c)), the softmax times the cap's
// derivative. Rows run in parallel with the fast path's tanh and exp
// kernels; the plain path declines (ok false), so the caller composes the
// same from single ops, which stay its reference.
func (b *Backend) SoftcapLogSoftmax(z tensor.Tensor, c float32, grad bool) (lse, pd tensor.Tensor, ok bool) {
	if b.opt.Plain {
		return nil, nil, false
	}
	if !b.ok("SoftcapLogSoftmax", z) {
		return empty, empty, true
	}
	tz := z.(*T)
	if len(tz.shape) != 2 {
		return b.fail("SoftcapLogSoftmax", "logits %v are not [n, V]", tz.shape), empty, true
	}
	n, V := tz.shape[0], tz.shape[1]
	var src []float32
	if tz.h == nil {
		src = asFloats(tz)
	}
	l := newF(n, 1)
	var p *T
	if grad {
		p = newF(n, V)
	}
	b.pool.run(n, 1, func(lo, hi int) {
		th, e := make([]float32, V), make([]float32, V)
		for row := lo; row < hi; row++ {
			if src != nil {
				copy(th, src[row*V:(row+1)*V])
			} else {
				widen(th, tz.h[row*V:(row+1)*V], tz.f16)
			}
			if c > 0 {
				for j := range th {
					th[j] /= c
				}
				kern.tanh(th)
			}
			m := float32(math.Inf(-1))
			for j, t := range th {
				s := t
				if c > 0 {
					s = t * c
				}
				e[j] = s
				m = max(m, s)
			}
			if math.IsInf(float64(m), -1) { // every logit −Inf: as Softmax and LogSumExp give
				l.f[row] = m
				if grad {
					for j := range e {
						p.f[row*V+j] = float32(math.NaN())
					}
				}
				continue
			}
			kern.exp(e, m)
			var sum float64
			for _, v := range e {
				sum += float64(v)
			}
			l.f[row] = float32(float64(m) + math.Log(sum))
			if !grad {
				continue
			}
			inv, out := float32(1/sum), p.f[row*V:(row+1)*V]
			for j, v := range e {
				d := float32(1)
				if c > 0 {
					d = 1 - th[j]*th[j]
				}
				out[j] = v * inv * d
			}
		}
	})
	if !grad {
		return l, nil, true
	}
	return l, p, true
}
