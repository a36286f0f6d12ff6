package gemma4

import (
	"fmt"
	"strings"

	"perch/engine/checkpoint"
	"perch/engine/tensor"
)

// loader binds checkpoint tensors with config-derived shapes.
type loader struct {
	ck  *checkpoint.Checkpoint
	b   tensor.Backend
	cfg *Config
	err error
}

func (ld *loader) quant(path string) *checkpoint.Quantization {
	if q, ok := ld.cfg.QuantOverrides[path]; ok {
		if q == nil {
			return nil
		}
		return &checkpoint.Quantization{Bits: q.Bits, GroupSize: q.GroupSize}
	}
	if ld.cfg.Quant.Bits == 0 {
		return nil
	}
	return &checkpoint.Quantization{Bits: ld.cfg.Quant.Bits, GroupSize: ld.cfg.Quant.GroupSize}
}

func (ld *loader) linear(path string, out, in int) *tensor.Linear {
	return ld.experts(path, 0, out, in)
}

func (ld *loader) experts(path string, n, out, in int) *tensor.Linear {
	if ld.err != nil {
		return nil
	}
	l, err := ld.ck.Linear(ld.b, path, n, out, in, ld.quant(path))
	if err != nil {
		ld.err = err
	}
	return l
}

func (ld *loader) tensor(name string, shape ...int) tensor.Tensor {
	if ld.err != nil {
		return nil
	}
	t, err := ld.ck.Tensor(ld.b, name, shape...)
	if err != nil {
		ld.err = err
	}
	return t
}

// LoadText binds the language model of an open checkpoint.
func LoadText(b tensor.Backend, ck *checkpoint.Checkpoint, cfg *Config) (*Text, error) {
	t := &cfg.Text
	prefix := findLayout(ck.Has).Text
	if !ck.Has(prefix + probeText) {
		return nil, fmt.Errorf("checkpoint %s has no language model (looked for %s under %s)", ck.Dir, probeText, strings.Join(textPrefixes, ", "))
	}
	ld := &loader{ck: ck, b: b, cfg: cfg}
	m := &Text{Cfg: t, b: b, Prefix: prefix}
	H, NL, P := t.HiddenSize, t.NumHiddenLayers, t.HiddenSizePerLayerInput
	m.EmbedTokens = ld.linear(prefix+"embed_tokens", t.VocabSize, H)
	m.Norm = ld.tensor(prefix+"norm.weight", H)
	if P > 0 {
		m.EmbedTokensPerLayer = ld.linear(prefix+"embed_tokens_per_layer", t.VocabSizePerLayerInput, NL*P)
		m.PerLayerModelProjection = ld.linear(prefix+"per_layer_model_projection", NL*P, H)
		m.PerLayerProjectionNorm = ld.tensor(prefix+"per_layer_projection_norm.weight", P)
	}
	for i := 0; i < NL && ld.err == nil; i++ {
		m.Layers = append(m.Layers, ld.layer(prefix, i))
	}
	if ld.err != nil {
		return nil, ld.err
	}
	if t.TieWordEmbeddings != nil && !*t.TieWordEmbeddings {
		return nil, fmt.Errorf("config says tie_word_embeddings false; Gemma-4 checkpoints tie the LM head to embed_tokens")
	}
	m.dt = activationDType(m.EmbedTokens)
	ck.Skip(ignoredText(ck, prefix, t)...)
	freqs, err := fullRoPEFreqs(b, t)
	if err != nil {
		return nil, err
	}
	m.fullFreqs = freqs
	return m, nil
}

// activationDType is the dtype the embeddings come out in.
func activationDType(l *tensor.Linear) tensor.DType {
	if l.Quantized() {
		return l.Scales.DType()
	}
	return l.W.DType()
}

func (ld *loader) layer(prefix string, i int) *DecoderLayer {
	t := &ld.cfg.Text
	H, P := t.HiddenSize, t.HiddenSizePerLayerInput
	hd, nH, nKV := t.HeadDimOf(i), t.NumAttentionHeads, t.KVHeadsOf(i)
	p := fmt.Sprintf("%slayers.%d.", prefix, i)
	l := &DecoderLayer{idx: i, full: t.IsFull(i)}
	l.InputLayernorm = ld.tensor(p+"input_layernorm.weight", H)
	l.PostAttentionLayernorm = ld.tensor(p+"post_attention_layernorm.weight", H)
	l.PreFeedforwardLayernorm = ld.tensor(p+"pre_feedforward_layernorm.weight", H)
	l.PostFeedforwardLayernorm = ld.tensor(p+"post_feedforward_layernorm.weight", H)
	l.LayerScalar = ld.tensor(p+"layer_scalar", 1)

	a := &l.SelfAttn
	a.QProj = ld.linear(p+"self_attn.q_proj", nH*hd, H)
	a.OProj = ld.linear(p+"self_attn.o_proj", H, nH*hd)
	a.QNorm = ld.tensor(p+"self_attn.q_norm.weight", hd)
	if t.KVDonor(i) == i {
		a.KProj = ld.linear(p+"self_attn.k_proj", nKV*hd, H)
		if !t.KEqV(i) {
			a.VProj = ld.linear(p+"self_attn.v_proj", nKV*hd, H)
		}
		a.KNorm = ld.tensor(p+"self_attn.k_norm.weight", hd)
	}

	I := t.MLPWidth(i)
	l.MLP = MLP{
		GateProj: ld.linear(p+"mlp.gate_proj", I, H),
		UpProj:   ld.linear(p+"mlp.up_proj", I, H),
		DownProj: ld.linear(p+"mlp.down_proj", H, I),
	}
	if t.EnableMoEBlock {
		E, MI := t.NumExperts, t.MoEIntermediateSize
		l.Router = &Router{
			Proj:           ld.linear(p+"router.proj", E, H),
			Scale:          ld.tensor(p+"router.scale", H),
			PerExpertScale: ld.tensor(p+"router.per_expert_scale", E),
		}
		l.Experts = ld.moeExperts(p, E, MI, H)
		l.PreFeedforwardLayernorm2 = ld.tensor(p+"pre_feedforward_layernorm_2.weight", H)
		l.PostFeedforwardLayernorm1 = ld.tensor(p+"post_feedforward_layernorm_1.weight", H)
		l.PostFeedforwardLayernorm2 = ld.tensor(p+"post_feedforward_layernorm_2.weight", H)
	}
	if P > 0 {
		l.PerLayerInputGate = ld.linear(p+"per_layer_input_gate", P, H)
		l.PerLayerProjection = ld.linear(p+"per_layer_projection", H, P)
		l.PostPerLayerInputNorm = ld.tensor(p+"post_per_layer_input_norm.weight", H)
	}
	return l
}

// ignoredText lists tensors the reference drops on load: K/V projections and
// norms of KV-shared layers, rotary tables, clip scalars outside the towers.
func ignoredText(ck *checkpoint.Checkpoint, prefix string, t *TextConfig) []string {
	var out []string
	for _, n := range ck.Names() {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		rest := n[len(prefix):]
		if strings.Contains(rest, "rotary_emb") || strings.HasSuffix(rest, "input_min") || strings.HasSuffix(rest, "input_max") ||
			strings.HasSuffix(rest, "output_min") || strings.HasSuffix(rest, "output_max") {
			out = append(out, n)
			continue
		}
		var i int
		var tail string
		if _, err := fmt.Sscanf(rest, "layers.%d.%s", &i, &tail); err == nil && i >= t.FirstShared() && i < t.NumHiddenLayers {
			for _, s := range []string{"self_attn.k_proj.", "self_attn.v_proj.", "self_attn.k_norm.", "self_attn.v_norm."} {
				if strings.HasPrefix(tail, s) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// moeExperts loads the routed experts: split per projection (mlx-community,
// quantized or not) or, in the Hugging Face layout, the fused gate_up_proj
// [E, 2I, H] (gate rows first, as mlx-vlm's sanitize splits it) and
// down_proj [E, H, I].
func (ld *loader) moeExperts(p string, E, I, H int) *MLP {
	if ld.err != nil {
		return nil
	}
	if !ld.ck.Has(p + expertsGateUp) {
		return &MLP{
			GateProj: ld.experts(p+expertsSplit+"gate_proj", E, I, H),
			UpProj:   ld.experts(p+expertsSplit+"up_proj", E, I, H),
			DownProj: ld.experts(p+expertsSplit+"down_proj", E, H, I),
		}
	}
	gu := ld.tensor(p+expertsGateUp, E, 2*I, H)
	down := ld.tensor(p+expertsDownRaw, E, H, I)
	if ld.err != nil {
		return nil
	}
	b := ld.b
	gate, up := b.Slice(gu, 1, 0, I), b.Slice(gu, 1, I, 2*I)
	if err := b.Eval(gate, up); err != nil {
		ld.err = fmt.Errorf("tensor %q: split into gate and up: %w", p+expertsGateUp, err)
		return nil
	}
	b.Pin(gate)
	b.Pin(up)
	b.Unpin(gu)
	return &MLP{
		GateProj: &tensor.Linear{W: gate, In: H, Out: I},
		UpProj:   &tensor.Linear{W: up, In: H, Out: I},
		DownProj: &tensor.Linear{W: down, In: I, Out: H},
	}
}
