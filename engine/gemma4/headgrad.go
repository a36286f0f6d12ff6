package gemma4

import "perch/engine/tensor"

// Target log-probabilities for training: the tied head and softcap over
// the vocabulary a block of rows at a time, with an online log-sum-exp, so
// the full [n, vocab] logits never exist and each block of the (possibly
// quantized) embedding is read once for the values and once more for the
// gradient.

// HeadNorm is the final norm the head applies to hidden states.
func (m *Text) HeadNorm(h tensor.Tensor) tensor.Tensor {
	return m.b.RMSNorm(h, m.Norm, float32(m.Cfg.RMSNormEps))
}

// TargetLogProbs returns logp [n] = log softmax(logits(hn[j]))[targets[j]]
// for normed rows hn [n, H] (HeadNorm) and int32 targets [n]; with grad
// also ∂Σ logp/∂hn [n, H]. Blocks hold about blockBytes of logits.
func (m *Text) TargetLogProbs(hn, targets tensor.Tensor, grad bool, blockBytes int) (logp, dhn tensor.Tensor) {
	b := m.b
	if b.Err() != nil || len(hn.Shape()) != 2 {
		return hn, hn // an earlier op failed: the backend reports it
	}
	E := m.EmbedTokens
	n, V := hn.Shape()[0], E.Out
	dt := hn.DType()
	f32 := tensor.Float32
	c := m.Cfg.FinalLogitSoftcapping
	// softcap returns the capped logits and their derivative 1 − tanh².
	softcap := func(z tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		z = b.AsType(z, f32)
		if c <= 0 {
			return z, nil
		}
		th := b.Tanh(b.Div(z, b.Scalar(c, f32)))
		return b.Mul(th, b.Scalar(c, f32)), b.Sub(b.Scalar(1, f32), b.Mul(th, th))
	}
	// The targets' logits from their embedding rows.
	et := b.AsType(b.Embedding(E, targets), f32) // [n, H]
	tgt, tgtD := softcap(b.Sum(b.Mul(b.AsType(hn, f32), et), -1, true))
	blk := max(64, min(V, blockBytes/(4*max(n, 1))))
	// Per block: its log-sum-exp and softmax (the backend's fused ops);
	// lse is the running log-sum-exp, acc Σ softmax·sc'·E scaled to it.
	var lse, acc tensor.Tensor // [n, 1]; [n, H]
	for v0 := 0; v0 < V; v0 += blk {
		v1 := min(V, v0+blk)
		bl, p := m.headBlock(b.Linear(hn, sliceRows(b, E, v0, v1)), softcap, grad) // [n, 1], [n, blk]
		nl := bl
		if lse != nil {
			hi := b.Maximum(lse, bl) // log(e^lse + e^bl) = hi + log(1 + e^(lo − hi))
			nl = b.Add(hi, b.Softplus(b.Sub(b.Minimum(lse, bl), hi)))
		}
		if grad {
			part := b.Mul(b.AsType(b.LinearT(b.AsType(p, dt), sliceRows(b, E, v0, v1)), f32), b.Exp(b.Sub(bl, nl)))
			if acc == nil {
				acc = part
			} else {
				acc = b.Add(b.Mul(acc, b.Exp(b.Sub(lse, nl))), part)
			}
		}
		lse = nl
		if acc != nil {
			b.Eval(lse, acc)
		} else {
			b.Eval(lse)
		}
	}
	logp = b.Reshape(b.Sub(tgt, lse), n)
	if !grad {
		return logp, nil
	}
	// ∂logp/∂hn = sc'(target)·E[target] − Σ_v softmax_v·sc'_v·E[v].
	g := et
	if tgtD != nil {
		g = b.Mul(et, tgtD)
	}
	dhn = b.AsType(b.Sub(g, acc), dt)
	return logp, dhn
}

// headBlock returns, for one block of raw logits z [n, blk], the block's
// log-sum-exp of the capped logits [n, 1] and, with grad, their softmax
// times the cap's derivative [n, blk].
func (m *Text) headBlock(z tensor.Tensor, softcap func(tensor.Tensor) (tensor.Tensor, tensor.Tensor), grad bool) (lse, pd tensor.Tensor) {
	b := m.b
	if f := tensor.FusedOf(b); f != nil {
		if lse, pd, ok := f.SoftcapLogSoftmax(z, float32(m.Cfg.FinalLogitSoftcapping), grad); ok {
			return lse, pd
		}
	}
	lg, d := softcap(z)
	lse = b.LogSumExp(lg, -1, true)
	if grad {
		pd = b.Softmax(lg, -1)
		if d != nil {
			pd = b.Mul(pd, d)
		}
	}
	return lse, pd
}

// sliceRows is rows [v0, v1) of a [Out, In] Linear (a view where the
// backend allows).
func sliceRows(b tensor.Backend, l *tensor.Linear, v0, v1 int) *tensor.Linear {
	c := *l
	c.W = b.Slice(l.W, 0, v0, v1)
	if l.Quantized() {
		c.Scales, c.Biases = b.Slice(l.Scales, 0, v0, v1), b.Slice(l.Biases, 0, v0, v1)
	}
	if l.Bias != nil {
		c.Bias = b.Slice(l.Bias, 0, v0, v1)
	}
	c.Out = v1 - v0
	return &c
}
