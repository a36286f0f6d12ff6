package gemma4

import (
	"math"

	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// DecoderLayer is one text layer (names follow the checkpoint keys).
type DecoderLayer struct {
	idx  int
	full bool

	InputLayernorm           tensor.Tensor
	PostAttentionLayernorm   tensor.Tensor
	PreFeedforwardLayernorm  tensor.Tensor
	PostFeedforwardLayernorm tensor.Tensor
	LayerScalar              tensor.Tensor // [1]
	SelfAttn                 Attention
	MLP                      MLP

	// MoE (26B-A4B).
	Router                    *Router
	Experts                   *MLP // expert-stacked gate/up/down
	PreFeedforwardLayernorm2  tensor.Tensor
	PostFeedforwardLayernorm1 tensor.Tensor
	PostFeedforwardLayernorm2 tensor.Tensor

	// Per-layer inputs (E2B/E4B).
	PerLayerInputGate     *tensor.Linear // [P, H]
	PerLayerProjection    *tensor.Linear // [H, P]
	PostPerLayerInputNorm tensor.Tensor
}

// Attention holds the projections and norms of one layer.
type Attention struct {
	QProj, KProj, VProj, OProj *tensor.Linear // KProj/VProj nil on shared layers; VProj nil with K-eq-V
	QNorm, KNorm               tensor.Tensor
}

// MLP is the gated GELU feed-forward: down(gelu_tanh(gate(x)) * up(x)).
type MLP struct {
	GateProj, UpProj, DownProj *tensor.Linear
}

// Router picks the top-k experts of the MoE block.
type Router struct {
	Proj           *tensor.Linear // [E, H]
	Scale          tensor.Tensor  // [H]
	PerExpertScale tensor.Tensor  // [E]
}

func (l *DecoderLayer) forward(m *Text, x tensor.Tensor, mask tensor.Mask, cache kvcache.Cache, pli, k, v tensor.Tensor, offset int) (tensor.Tensor, tensor.Tensor, tensor.Tensor, int) {
	b, cfg := m.b, m.Cfg
	eps := float32(cfg.RMSNormEps)

	h := b.RMSNorm(x, l.InputLayernorm, eps)
	h, k, v, offset = l.attention(m, h, mask, cache, k, v, offset)
	h = b.RMSNorm(h, l.PostAttentionLayernorm, eps)
	h = b.Add(x, h)

	residual := h
	if l.Router != nil {
		h1 := m.mlp(&l.MLP, b.RMSNorm(h, l.PreFeedforwardLayernorm, eps))
		h1 = b.RMSNorm(h1, l.PostFeedforwardLayernorm1, eps)
		h2 := l.moe(m, h)
		h2 = b.RMSNorm(h2, l.PostFeedforwardLayernorm2, eps)
		h = b.Add(h1, h2)
	} else {
		h = m.mlp(&l.MLP, b.RMSNorm(h, l.PreFeedforwardLayernorm, eps))
	}
	h = b.RMSNorm(h, l.PostFeedforwardLayernorm, eps)
	h = b.Add(residual, h)

	if l.PerLayerInputGate != nil && pli != nil {
		g := b.GeluTanh(m.linear(h, l.PerLayerInputGate))
		g = b.Mul(g, pli)
		g = b.RMSNorm(m.linear(g, l.PerLayerProjection), l.PostPerLayerInputNorm, eps)
		h = b.Add(h, g)
	}
	return b.Mul(h, l.LayerScalar), k, v, offset
}

// attention is the layer's self-attention.
func (l *DecoderLayer) attention(m *Text, x tensor.Tensor, mask tensor.Mask, cache kvcache.Cache, k, v tensor.Tensor, offset int) (tensor.Tensor, tensor.Tensor, tensor.Tensor, int) {
	b, cfg := m.b, m.Cfg
	a := &l.SelfAttn
	eps := float32(cfg.RMSNormEps)
	L := x.Shape()[1]
	hd, nH, nKV := cfg.HeadDimOf(l.idx), cfg.NumAttentionHeads, cfg.KVHeadsOf(l.idx)

	// heads is [1, L, n*hd] -> [1, L, n, hd]; headsFirst puts heads before
	// time, [1, n, L, hd]. For one position the two have one memory order,
	// so a decode step reshapes straight to the latter (fewer graph nodes).
	heads := func(t tensor.Tensor, n int) tensor.Tensor {
		if L == 1 {
			return b.Reshape(t, 1, n, 1, hd)
		}
		return b.Reshape(t, 1, L, n, hd)
	}
	headsFirst := func(t tensor.Tensor) tensor.Tensor {
		if L == 1 {
			return t
		}
		return b.Transpose(t, 0, 2, 1, 3)
	}
	q := heads(m.linear(x, a.QProj), nH)
	q = b.RMSNorm(q, a.QNorm, eps)
	if a.KProj != nil {
		k = heads(m.linear(x, a.KProj), nKV)
		if a.VProj == nil { // K-eq-V: values from the raw key projection
			v = k
		} else {
			v = heads(m.linear(x, a.VProj), nKV)
		}
		offset = 0
		if cache != nil {
			offset = cache.Offset()
		}
		k = b.RMSNorm(k, a.KNorm, eps)
		k = m.rope(headsFirst(k), l.full, offset)
		v = headsFirst(b.RMSNorm(v, nil, eps))
		if cache != nil {
			k, v = cache.Update(b, k, v)
		}
	}
	q = m.rope(headsFirst(q), l.full, offset)
	o := b.SDPA(q, k, v, 1.0, mask)
	if L == 1 {
		o = b.Reshape(o, 1, 1, nH*hd)
	} else {
		o = b.Reshape(b.Transpose(o, 0, 2, 1, 3), 1, L, nH*hd)
	}
	return m.linear(o, a.OProj), k, v, offset
}

// rope rotates x at offset.
func (m *Text) rope(x tensor.Tensor, full bool, offset int) tensor.Tensor {
	dims, base, freqs := m.Cfg.HeadDim, float32(m.Cfg.RopeParameters["sliding_attention"].RopeTheta), tensor.Tensor(nil)
	if full {
		dims, base = m.Cfg.GlobalHeadDim, float32(m.Cfg.RopeParameters["full_attention"].RopeTheta)
		if m.fullFreqs != nil {
			base, freqs = 0, m.fullFreqs
		}
	}
	return m.b.RoPE(x, dims, false, base, 1, offset, freqs)
}

// moe routes each position of h to its top-k experts and sums their
// outputs weighted by softmax(top-k scores) * per_expert_scale.
func (l *DecoderLayer) moe(m *Text, h tensor.Tensor) tensor.Tensor {
	b, cfg := m.b, m.Cfg
	eps := float32(cfg.RMSNormEps)
	L, H, K, E := h.Shape()[1], cfg.HiddenSize, cfg.TopKExperts, cfg.NumExperts
	r := l.Router

	scale := b.Mul(r.Scale, b.Scalar(math.Pow(float64(H), -0.5), r.Scale.DType()))
	scores := b.Linear(b.RMSNorm(h, scale, eps), r.Proj) // [1, L, E]
	idx := b.Slice(b.ArgPartition(scores, E-K, -1), -1, E-K, E)
	w := b.Softmax(b.TakeAlong(scores, idx, -1), -1)
	w = b.Mul(w, b.Take(r.PerExpertScale, idx, 0)) // [1, L, K]

	x := b.Reshape(b.RMSNorm(h, l.PreFeedforwardLayernorm2, eps), L, 1, H)
	idx2 := b.Reshape(idx, L, K)
	gate := b.GatherLinear(x, l.Experts.GateProj, idx2) // [L, K, I]
	up := b.GatherLinear(x, l.Experts.UpProj, idx2)
	y := b.GatherLinear(b.Mul(b.GeluTanh(gate), up), l.Experts.DownProj, idx2) // [L, K, H]
	y = b.Mul(b.Reshape(w, L, K, 1), y)
	return b.Reshape(b.Sum(y, 1, false), 1, L, H)
}
