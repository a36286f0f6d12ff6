package gemma4

import "perch/engine/tensor"

// The forward pass of one fresh sequence (no cache) a layer at a time, for
// training: the trainer runs layers one by one, recomputing each on a
// gradient tape during the backward pass. Forward computes the same thing.

// Prelude is what a forward computes before the first layer.
type Prelude struct {
	H     tensor.Tensor // [1, L, H]: layer 0's input
	PLE   tensor.Tensor // [1, L, NL, P] per-layer inputs, nil without
	Masks map[bool]tensor.Mask
}

// Begin computes the embeddings (or takes in.Embeds), the per-layer inputs
// and the masks of a fresh sequence.
func (m *Text) Begin(in Inputs) Prelude {
	h := in.Embeds
	if h == nil {
		h = m.Embed(in.IDs)
	}
	p := Prelude{H: h, Masks: m.masks(h.Shape()[1], nil, in.VisionBlocks)}
	if m.Cfg.HiddenSizePerLayerInput > 0 {
		ids := in.PLEIDs
		if ids == nil {
			ids = in.IDs
		}
		p.PLE = m.perLayerInputs(h, ids)
	}
	return p
}

// PerLayerInput is layer i's slice of p.PLE, [1, L, P], or nil.
func (m *Text) PerLayerInput(p Prelude, i int) tensor.Tensor {
	if p.PLE == nil {
		return nil
	}
	L := p.PLE.Shape()[1]
	return m.b.Reshape(m.b.Slice(p.PLE, 2, i, i+1), 1, L, m.Cfg.HiddenSizePerLayerInput)
}

// Mask is the mask layer i uses.
func (m *Text) Mask(p Prelude, i int) tensor.Mask { return p.Masks[m.Cfg.IsFull(i)] }

// Layer runs decoder layer i over h. For a KV-shared layer k and v are its
// donor's (Cfg.KVDonor) keys and values; other layers ignore them. It
// returns the layer's output and the keys and values it computed (a donor)
// or used (a shared layer): [1, Hkv, L, D], after norm and RoPE.
func (m *Text) Layer(i int, h, pli tensor.Tensor, mask tensor.Mask, k, v tensor.Tensor) (out, kOut, vOut tensor.Tensor) {
	out, kOut, vOut, _ = m.Layers[i].forward(m, h, mask, nil, pli, k, v, 0)
	return out, kOut, vOut
}

// Head applies the final norm, the tied head and the softcap: logits
// [1, L, vocab].
func (m *Text) Head(h tensor.Tensor) tensor.Tensor {
	return m.Logits(m.b.RMSNorm(h, m.Norm, float32(m.Cfg.RMSNormEps)))
}

// Backend is the backend m's ops run on.
func (m *Text) Backend() tensor.Backend { return m.b }
