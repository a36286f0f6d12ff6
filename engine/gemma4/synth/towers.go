package synth

import (
	"fmt"

	"perch/engine/gemma4"
)

// clipBound is the magnitude of the random models' clip scalars: wide
// enough not to bind on typical activations, present as real ones are.
const clipBound = 100

// clippable adds prefix.linear plus its four 0-d clip scalars.
func (w *writer) clippable(prefix string, out, in int, clip bool) {
	w.linear(prefix+".linear", 0, out, in)
	if clip {
		w.scalar(prefix+".input_min", -clipBound)
		w.scalar(prefix+".input_max", clipBound)
		w.scalar(prefix+".output_min", -clipBound)
		w.scalar(prefix+".output_max", clipBound)
	}
}

// dense runs add with quantization off: the towers of mlx-community
// checkpoints stay bf16 (their projectors into the text space do not).
func (w *writer) dense(add func()) {
	bits := w.opt.Bits
	w.opt.Bits = 0
	defer func() { w.opt.Bits = bits }()
	add()
}

// vision adds the SigLIP-style tower or the 12B's encoder-free embedder,
// and embed_vision.
func (w *writer) vision(v *gemma4.VisionConfig, textHidden int) {
	if v.Unified() {
		E, pd, p := v.MMEmbedDim, 3*v.ModelPatchSize*v.ModelPatchSize, "vision_embedder."
		w.dense(func() {
			w.norm(p+"patch_ln1.weight", pd)
			w.weight(p+"patch_ln1.bias", pd)
			w.linear(p+"patch_dense", 0, E, pd)
			w.weight(p+"patch_dense.bias", E)
			w.norm(p+"patch_ln2.weight", E)
			w.weight(p+"patch_ln2.bias", E)
			w.weight(p+"pos_embedding", v.MMPosembSize, 2, E)
			w.norm(p+"pos_norm.weight", E)
			w.weight(p+"pos_norm.bias", E)
		})
		w.linear("embed_vision.embedding_projection", 0, textHidden, v.OutputProjDims)
		return
	}
	D, hd, p := v.HiddenSize, v.HeadDim, "vision_tower."
	w.dense(func() {
		w.linear(p+"patch_embedder.input_proj", 0, D, 3*v.PatchSize*v.PatchSize)
		w.weight(p+"patch_embedder.position_embedding_table", 2, v.PositionEmbeddingSize, D)
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
			w.weight(p+"std_bias", D)
			w.norm(p+"std_scale", D)
		}
	})
	w.linear("embed_vision.embedding_projection", 0, textHidden, D)
}

// audio adds the conformer tower (conv weights in MLX order, or PyTorch's
// in the Hugging Face layout) and embed_audio.
func (w *writer) audio(a *gemma4.AudioConfig, textHidden int) error {
	if a.Unified() {
		w.linear("embed_audio.embedding_projection", 0, textHidden, a.EmbedDim())
		return nil
	}
	H, ch, p := a.HiddenSize, a.SubsamplingConvChannels, "audio_tower."
	if len(ch) != 2 {
		return fmt.Errorf("synth: want 2 subsampling channels, config has %v", ch)
	}
	conv := func(name string, mlx []int, torchPerm []int) {
		if w.hf() {
			w.permuted(name, mlx, torchPerm)
		} else {
			w.weight(name, mlx...)
		}
	}
	w.dense(func() {
		sp := p + "subsample_conv_projection."
		conv(sp+"layer0.conv.weight", []int{ch[0], 3, 3, 1}, []int{0, 3, 1, 2})
		w.norm(sp+"layer0.norm.weight", ch[0])
		conv(sp+"layer1.conv.weight", []int{ch[1], 3, 3, ch[0]}, []int{0, 3, 1, 2})
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
			w.weight(l+"self_attn.per_dim_scale", a.HeadDim())
			w.norm(l+"lconv1d.pre_layer_norm.weight", H)
			w.clippable(l+"lconv1d.linear_start", 2*H, H, true)
			conv(l+"lconv1d.depthwise_conv1d.weight", []int{H, a.ConvKernelSize, 1}, []int{0, 2, 1})
			w.norm(l+"lconv1d.conv_norm.weight", H)
			w.clippable(l+"lconv1d.linear_end", H, H, true)
			for _, n := range []string{"norm_pre_attn", "norm_post_attn", "norm_out"} {
				w.norm(l+n+".weight", H)
			}
		}
		out := a.EmbedDim()
		w.linear(p+"output_proj", 0, out, H)
		w.weight(p+"output_proj.bias", out)
	})
	w.linear("embed_audio.embedding_projection", 0, textHidden, a.EmbedDim())
	return nil
}
