package synth

import (
	"fmt"
	"io"
	"math/rand/v2"

	"perch/engine/gemma4"
	"perch/engine/safetensors"
)

// text adds the language model under language_model.model.* (canonical).
func (w *writer) text(t *gemma4.TextConfig) {
	p := "language_model.model."
	H, NL, P := t.HiddenSize, t.NumHiddenLayers, t.HiddenSizePerLayerInput
	w.linear(p+"embed_tokens", 0, t.VocabSize, H)
	w.norm(p+"norm.weight", H)
	if P > 0 {
		w.linear(p+"embed_tokens_per_layer", 0, t.VocabSizePerLayerInput, NL*P)
		w.linear(p+"per_layer_model_projection", 0, NL*P, H)
		w.norm(p+"per_layer_projection_norm.weight", P)
	}
	for i := 0; i < NL; i++ {
		w.layer(t, fmt.Sprintf("%slayers.%d.", p, i), i)
	}
}

func (w *writer) layer(t *gemma4.TextConfig, l string, i int) {
	H, P := t.HiddenSize, t.HiddenSizePerLayerInput
	hd, nH, nKV := t.HeadDimOf(i), t.NumAttentionHeads, t.KVHeadsOf(i)
	for _, n := range []string{"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"} {
		w.norm(l+n+".weight", H)
	}
	w.floats(l+"layer_scalar", func(r *rand.Rand) float32 { return 0.5 + r.Float32() }, 1)
	w.linear(l+"self_attn.q_proj", 0, nH*hd, H)
	w.linear(l+"self_attn.o_proj", 0, H, nH*hd)
	w.norm(l+"self_attn.q_norm.weight", hd)
	// KV-shared layers keep their unused K/V in Hugging Face archives;
	// mlx-vlm's converter drops them.
	if t.KVDonor(i) == i || w.hf() {
		w.linear(l+"self_attn.k_proj", 0, nKV*hd, H)
		if !t.KEqV(i) {
			w.linear(l+"self_attn.v_proj", 0, nKV*hd, H)
		}
		w.norm(l+"self_attn.k_norm.weight", hd)
	}
	I := t.MLPWidth(i)
	w.linear(l+"mlp.gate_proj", 0, I, H)
	w.linear(l+"mlp.up_proj", 0, I, H)
	w.linear(l+"mlp.down_proj", 0, H, I)
	if t.EnableMoEBlock {
		E, MI := t.NumExperts, t.MoEIntermediateSize
		w.linear(l+"router.proj", 0, E, H)
		w.norm(l+"router.scale", H)
		w.floats(l+"router.per_expert_scale", normal(1, 0.1), E)
		w.experts(l, E, MI, H)
		for _, n := range []string{"pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"} {
			w.norm(l+n+".weight", H)
		}
	}
	if P > 0 {
		w.linear(l+"per_layer_input_gate", 0, P, H)
		w.linear(l+"per_layer_projection", 0, H, P)
		w.norm(l+"post_per_layer_input_norm.weight", H)
	}
}

// experts adds the routed experts: split switch_glu projections
// (mlx-community), or Hugging Face's fused gate_up_proj [E, 2I, H] (each
// expert's gate rows, then its up rows) and down_proj [E, H, I], with the
// same values as the split form.
func (w *writer) experts(l string, E, I, H int) {
	split := l + "experts.switch_glu."
	if !w.hf() {
		w.linear(split+"gate_proj", E, I, H)
		w.linear(split+"up_proj", E, I, H)
		w.linear(split+"down_proj", E, H, I)
		return
	}
	dt, g := w.floatDType(), normal(0, w.opt.Scale)
	gate, up := split+"gate_proj.weight", split+"up_proj.weight"
	w.tensors = append(w.tensors,
		safetensors.Tensor{Name: w.stored(l + "experts.gate_up_proj"), DType: dt, Shape: []int{E, 2 * I, H},
			Stream: func(out io.Writer) error {
				rg, ru := w.rng(gate), w.rng(up)
				for e := 0; e < E; e++ {
					if err := encodeFloats(out, dt, I*H, rg, g); err != nil {
						return err
					}
					if err := encodeFloats(out, dt, I*H, ru, g); err != nil {
						return err
					}
				}
				return nil
			}},
		safetensors.Tensor{Name: w.stored(l + "experts.down_proj"), DType: dt, Shape: []int{E, H, I},
			Stream: func(out io.Writer) error { return encodeFloats(out, dt, E*H*I, w.rng(split+"down_proj.weight"), g) }})
}
