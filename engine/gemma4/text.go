// Port of mlx-vlm's models/gemma4/language.py (the Gemma-4 text decoder).
//   - Constants are 0-d tensors in the activation dtype, like MLX's weak
//     Python scalars (bf16 checkpoints multiply by bf16(sqrt(H))).
//   - KV-shared layers reuse the keys/values (and RoPE offset) their donor
//     returned in the same forward pass; shared layers have no cache.
//   - The vision bidirectional overlay applies only when text_config asks
//     for it ("vision"), per contiguous image/video block within one pass
//     (a block is never split across prefill chunks).
package gemma4

import (
	"fmt"
	"math"

	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// Text is the language model: embeddings, decoder layers, final norm and
// the tied LM head.
type Text struct {
	Cfg *TextConfig
	b   tensor.Backend
	dt  tensor.DType // activation dtype

	EmbedTokens             *tensor.Linear // [vocab, H]
	EmbedTokensPerLayer     *tensor.Linear // [vocab_ple, NL*P] (E2B/E4B)
	PerLayerModelProjection *tensor.Linear // [NL*P, H]
	PerLayerProjectionNorm  tensor.Tensor  // [P]
	Layers                  []*DecoderLayer
	Norm                    tensor.Tensor // [H]

	fullFreqs tensor.Tensor // proportional RoPE frequencies of full layers

	// WindowSlack is how many slots sliding caches keep beyond the window,
	// so that a follow-up can cut a cached conversation back that far.
	WindowSlack int

	// Prefix is where the checkpoint keeps the language model
	// ("language_model.model."); adapter keys start with it.
	Prefix string
	// Adapter, when set, adds its LoRAs to the projections it binds
	// (adapter.go); nil runs the base model.
	Adapter Adapter
}

// Inputs of one forward call over L new positions (B = 1).
type Inputs struct {
	IDs tensor.Tensor // int32 [1, L]
	// Embeds, when set, replaces embed_tokens(IDs)*scale (multimodal rows merged).
	Embeds tensor.Tensor // [1, L, H]
	// PLEIDs are the ids for the per-layer embeddings (multimodal ids set to
	// pad); nil means IDs.
	PLEIDs tensor.Tensor
	// VisionBlocks, when set (len L), marks each new position with its
	// image/video block id or -1; used only if the config asks for the overlay.
	VisionBlocks []int
	// LastOnly keeps logits of the last position only.
	LastOnly bool
}

// NewCaches makes one cache per layer: donors get a full or rotating cache,
// KV-shared layers nil.
func (m *Text) NewCaches() []kvcache.Cache {
	cs := make([]kvcache.Cache, len(m.Layers))
	for i := range cs {
		if m.Cfg.KVDonor(i) != i {
			continue
		}
		if m.Cfg.IsFull(i) {
			cs[i] = &kvcache.Full{}
		} else {
			cs[i] = kvcache.NewWindow(m.Cfg.SlidingWindow, m.WindowSlack)
		}
	}
	return cs
}

func (m *Text) scalar(v float64) tensor.Tensor { return m.b.Scalar(v, m.dt) }

// DType is the activation dtype (the embeddings' dtype on this backend).
func (m *Text) DType() tensor.DType { return m.dt }

// Embed returns embed_tokens(ids) * sqrt(H) in the activation dtype: [1, L, H].
func (m *Text) Embed(ids tensor.Tensor) tensor.Tensor {
	b := m.b
	h := b.Embedding(m.EmbedTokens, ids)
	return b.Mul(h, m.scalar(math.Sqrt(float64(m.Cfg.HiddenSize))))
}

// Forward runs the decoder over in and returns logits [1, L or 1, vocab].
func (m *Text) Forward(in Inputs, caches []kvcache.Cache) tensor.Tensor {
	b, cfg := m.b, m.Cfg
	h := in.Embeds
	if h == nil {
		h = m.Embed(in.IDs)
	}
	L := h.Shape()[1]

	var ple tensor.Tensor // [1, L, NL, P]
	if cfg.HiddenSizePerLayerInput > 0 {
		ids := in.PLEIDs
		if ids == nil {
			ids = in.IDs
		}
		ple = m.perLayerInputs(h, ids)
	}

	masks := m.masks(L, caches, in.VisionBlocks)
	type shared struct {
		k, v   tensor.Tensor
		offset int
	}
	kvs := make([]shared, len(m.Layers))
	for i, layer := range m.Layers {
		mark := b.Mark()
		var pli tensor.Tensor
		if ple != nil {
			pli = b.Reshape(b.Slice(ple, 2, i, i+1), 1, L, cfg.HiddenSizePerLayerInput)
		}
		d := cfg.KVDonor(i)
		var k, v tensor.Tensor
		var off int
		if d != i {
			k, v, off = kvs[d].k, kvs[d].v, kvs[d].offset
		}
		var cache kvcache.Cache
		if caches != nil {
			cache = caches[i]
		}
		h, k, v, off = layer.forward(m, h, masks[cfg.IsFull(i)], cache, pli, k, v, off)
		kvs[i] = shared{k, v, off}
		b.SweepSince(mark, h, k, v) // the layer's intermediates now live only in the graph
	}
	if in.LastOnly && L > 1 {
		h = b.Slice(h, 1, L-1, L)
	}
	h = b.RMSNorm(h, m.Norm, float32(cfg.RMSNormEps))
	return m.Logits(h)
}

// Logits applies the tied head and the final softcap: tanh(x/cap)*cap.
func (m *Text) Logits(h tensor.Tensor) tensor.Tensor {
	b := m.b
	logits := b.Linear(h, m.EmbedTokens)
	if c := m.Cfg.FinalLogitSoftcapping; c > 0 {
		logits = tensor.Softcap(b, logits, float32(c))
	}
	return logits
}

// perLayerInputs combines the per-layer token embeddings with a projection
// of h: (rms(proj(h) * H^-0.5) + tok * sqrt(P)) * 2^-0.5, [1, L, NL, P].
func (m *Text) perLayerInputs(h, ids tensor.Tensor) tensor.Tensor {
	b, cfg := m.b, m.Cfg
	L, P, NL := h.Shape()[1], cfg.HiddenSizePerLayerInput, cfg.NumHiddenLayers
	tok := b.Embedding(m.EmbedTokensPerLayer, ids)
	tok = b.Mul(tok, m.scalar(math.Sqrt(float64(P))))
	tok = b.Reshape(tok, 1, L, NL, P)
	proj := b.Linear(h, m.PerLayerModelProjection)
	proj = b.Mul(proj, m.scalar(math.Pow(float64(cfg.HiddenSize), -0.5)))
	proj = b.Reshape(proj, 1, L, NL, P)
	proj = b.RMSNorm(proj, m.PerLayerProjectionNorm, float32(cfg.RMSNormEps))
	return b.Mul(b.Add(proj, tok), m.scalar(math.Pow(2, -0.5)))
}

// masks returns the mask of sliding (false) and full (true) layers, taken
// from the first donor cache of each kind before it is updated.
func (m *Text) masks(L int, caches []kvcache.Cache, blocks []int) map[bool]tensor.Mask {
	b, cfg := m.b, m.Cfg
	if !(cfg.UseBidirectionalAttention == "vision" && L > 1 && len(blocks) == L && hasBlock(blocks)) {
		blocks = nil // the overlay applies only where the config asks for it
	}
	out := map[bool]tensor.Mask{}
	for i := range m.Layers {
		full := cfg.IsFull(i)
		if _, done := out[full]; done || cfg.KVDonor(i) != i {
			continue
		}
		switch {
		case caches != nil && caches[i] != nil:
			out[full] = caches[i].Mask(b, L, blocks)
		case L == 1:
			out[full] = tensor.Mask{}
		default: // no cache: a fresh sequence
			window := 0
			if !full {
				window = cfg.SlidingWindow
			}
			if blocks == nil && (full || L <= window) {
				out[full] = tensor.Mask{Kind: tensor.MaskCausal}
			} else {
				out[full] = tensor.Mask{Kind: tensor.MaskArray, Array: kvcache.OverlayMask(b, L, window, blocks)}
			}
		}
	}
	return out
}

func hasBlock(blocks []int) bool {
	for _, id := range blocks {
		if id >= 0 {
			return true
		}
	}
	return false
}

// fullRoPEFreqs builds the proportional-RoPE frequency table of full layers:
// factor * theta^(2i/hd) for the rotated pairs, +Inf (identity) for the rest,
// computed with the backend's float32 power as the reference does.
func fullRoPEFreqs(b tensor.Backend, cfg *TextConfig) (tensor.Tensor, error) {
	rp := cfg.RopeParameters["full_attention"]
	if rp.RopeType != "proportional" {
		return nil, nil
	}
	dims := cfg.GlobalHeadDim
	rotated := 2 * int(rp.PartialRotaryFactor*float64(dims)/2)
	angles := rotated / 2
	if angles <= 0 {
		return nil, fmt.Errorf("proportional RoPE with no rotated dimensions")
	}
	exps := make([]float32, angles)
	for i := range exps {
		exps[i] = float32(2*i) / float32(dims)
	}
	factor := rp.Factor
	if factor == 0 {
		factor = 1
	}
	f := b.Pow(b.Scalar(rp.RopeTheta, tensor.Float32), b.FromFloat32(exps, []int{angles}, tensor.Float32))
	f = b.Mul(b.Scalar(factor, tensor.Float32), f)
	if rest := dims/2 - angles; rest > 0 {
		inf := make([]float32, rest)
		for i := range inf {
			inf[i] = float32(math.Inf(1))
		}
		f = b.Concat(0, f, b.FromFloat32(inf, []int{rest}, tensor.Float32))
	}
	if err := b.Eval(f); err != nil {
		return nil, err
	}
	b.Pin(f)
	return f, nil
}
