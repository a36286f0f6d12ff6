package synth

import (
	"fmt"

	"perch/engine/gemma4"
)

// clipBound is the magnitude of the random models' clip scalars: wide
// enough not to bind on typical activations, present as real ones are.
const clipBound = 100

func (w *writer) scalar(name string, v float32) { w.dense(name, []float32{v}) }

// clippable writes prefix.linear plus its four clip scalars.
func (w *writer) clippable(prefix string, out, in int, clip bool) {
	w.linear(prefix+".linear", 0, out, in)
	if clip {
		w.scalar(prefix+".input_min", -clipBound)
		w.scalar(prefix+".input_max", clipBound)
		w.scalar(prefix+".output_min", -clipBound)
		w.scalar(prefix+".output_max", clipBound)
	}
}

// denseOnly writes a float weight even when the text model is quantized
// (the towers of mlx-community checkpoints stay bf16).
func (w *writer) denseOnly(name string, shape ...int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	w.dense(name, w.normal(n, 0, w.opt.Scale), shape...)
}

// vision writes the SigLIP-style tower and embed_vision.
func (w *writer) vision(v *gemma4.VisionConfig, textHidden int) error {
	if v.Unified() {
		return fmt.Errorf("synth: the unified vision embedder is not generated (use the fixture)")
	}
	D, hd, p := v.HiddenSize, v.HeadDim, "vision_tower."
	bits := w.opt.Bits
	w.opt.Bits = 0 // tower weights stay dense
	w.linear(p+"patch_embedder.input_proj", 0, D, 3*v.PatchSize*v.PatchSize)
	w.denseOnly(p+"patch_embedder.position_embedding_table", 2, v.PositionEmbeddingSize, D)
	for i := 0; i < v.NumHiddenLayers; i++ {
		l := fmt.Sprintf("%sencoder.layers.%d.", p, i)
		for _, n := range []string{"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"} {
			w.norm(l+n+".weight", D)
		}
		w.clippable(l+"self_attn.q_proj", v.NumAttentionHeads*hd, D, v.UseClippedLinears)
		w.clippable(l+"self_attn.k_proj", v.NumKeyValueHeads*hd, D, v.UseClippedLinears)
		w.clippable(l+"self_attn.v_proj", v.NumKeyValueHeads*hd, D, v.UseClippedLinears)
		w.clippable(l+"self_attn.o_proj", D, v.NumAttentionHeads*hd, v.UseClippedLinears)
		w.norm(l+"self_attn.q_norm.weight", hd)
		w.norm(l+"self_attn.k_norm.weight", hd)
		w.clippable(l+"mlp.gate_proj", v.IntermediateSize, D, v.UseClippedLinears)
		w.clippable(l+"mlp.up_proj", v.IntermediateSize, D, v.UseClippedLinears)
		w.clippable(l+"mlp.down_proj", D, v.IntermediateSize, v.UseClippedLinears)
	}
	if v.Standardize {
		w.denseOnly(p+"std_bias", D)
		w.norm(p+"std_scale", D)
	}
	w.opt.Bits = bits
	w.linear("embed_vision.embedding_projection", 0, textHidden, D)
	return nil
}

// audio writes the conformer tower and embed_audio.
func (w *writer) audio(a *gemma4.AudioConfig, textHidden int) error {
	if a.Unified() {
		w.linear("embed_audio.embedding_projection", 0, textHidden, a.EmbedDim())
		return nil
	}
	H, ch, p := a.HiddenSize, a.SubsamplingConvChannels, "audio_tower."
	if len(ch) != 2 {
		return fmt.Errorf("synth: want 2 subsampling channels, config has %v", ch)
	}
	bits := w.opt.Bits
	w.opt.Bits = 0
	sp := p + "subsample_conv_projection."
	w.denseOnly(sp+"layer0.conv.weight", ch[0], 3, 3, 1)
	w.norm(sp+"layer0.norm.weight", ch[0])
	w.denseOnly(sp+"layer1.conv.weight", ch[1], 3, 3, ch[0])
	w.norm(sp+"layer1.norm.weight", ch[1])
	w.linear(sp+"input_proj_linear", 0, H, a.SubsampledFreq()*ch[1])
	for i := 0; i < a.NumHiddenLayers; i++ {
		l := fmt.Sprintf("%slayers.%d.", p, i)
		for _, ff := range []string{"feed_forward1.", "feed_forward2."} {
			w.norm(l+ff+"pre_layer_norm.weight", H)
			w.clippable(l+ff+"ffw_layer_1", 4*H, H, true)
			w.clippable(l+ff+"ffw_layer_2", H, 4*H, true)
			w.norm(l+ff+"post_layer_norm.weight", H)
		}
		for _, n := range []string{"q_proj", "k_proj", "v_proj", "post"} {
			w.clippable(l+"self_attn."+n, H, H, true)
		}
		w.linear(l+"self_attn.relative_k_proj", 0, H, H)
		w.denseOnly(l+"self_attn.per_dim_scale", a.HeadDim())
		w.norm(l+"lconv1d.pre_layer_norm.weight", H)
		w.clippable(l+"lconv1d.linear_start", 2*H, H, true)
		w.denseOnly(l+"lconv1d.depthwise_conv1d.weight", H, a.ConvKernelSize, 1)
		w.norm(l+"lconv1d.conv_norm.weight", H)
		w.clippable(l+"lconv1d.linear_end", H, H, true)
		for _, n := range []string{"norm_pre_attn", "norm_post_attn", "norm_out"} {
			w.norm(l+n+".weight", H)
		}
	}
	out := a.EmbedDim()
	w.linear(p+"output_proj", 0, out, H)
	w.denseOnly(p+"output_proj.bias", out)
	w.opt.Bits = bits
	w.linear("embed_audio.embedding_projection", 0, textHidden, out)
	return nil
}
