package gemma4

import (
	"fmt"

	"perch/engine/checkpoint"
	"perch/engine/tensor"
)

// Vision is whichever image path the model has.
type Vision interface {
	Encode(p *Patches) (tensor.Tensor, error)
}

// LoadVision binds the image path: the SigLIP tower (gemma4_vision) or the
// unified embedder; nil when the config has no vision_config.
func LoadVision(b tensor.Backend, ck *checkpoint.Checkpoint, cfg *Config) (Vision, *VisionConfig, error) {
	vc := cfg.Vision
	if vc == nil {
		return nil, nil, nil
	}
	ld := &loader{ck: ck, b: b, cfg: cfg}
	H := cfg.Text.HiddenSize
	names := findLayout(ck.Has)
	if vc.Unified() {
		E, pd := vc.MMEmbedDim, 3*vc.ModelPatchSize*vc.ModelPatchSize
		p := names.VisionEmbedder
		v := &VisionEmbedder{Cfg: vc, b: b,
			PatchLn1W: ld.tensor(p+"patch_ln1.weight", pd), PatchLn1B: ld.tensor(p+"patch_ln1.bias", pd),
			PatchDense: ld.linear(p+"patch_dense", E, pd),
			PatchLn2W:  ld.tensor(p+"patch_ln2.weight", E), PatchLn2B: ld.tensor(p+"patch_ln2.bias", E),
			PosEmbedding: ld.tensor(p+"pos_embedding", vc.MMPosembSize, 2, E),
			PosNormW:     ld.tensor(p+"pos_norm.weight", E), PosNormB: ld.tensor(p+"pos_norm.bias", E),
			EmbedVision: Embedder{EmbeddingProjection: ld.linear(names.EmbedVision+"embedding_projection", H, vc.OutputProjDims), eps: float32(vc.RMSNormEps)},
		}
		if ld.err == nil && (v.PatchDense.Bias == nil) {
			ld.err = fmt.Errorf("checkpoint %s is missing tensor %q", ck.Dir, p+"patch_dense.bias")
		}
		return v, vc, ld.err
	}
	D, hd := vc.HiddenSize, vc.HeadDim
	p := names.Vision
	v := &VisionTower{Cfg: vc, b: b,
		InputProj:              ld.linear(p+"patch_embedder.input_proj", D, 3*vc.PatchSize*vc.PatchSize),
		PositionEmbeddingTable: ld.tensor(p+"patch_embedder.position_embedding_table", 2, vc.PositionEmbeddingSize, D),
		EmbedVision:            Embedder{EmbeddingProjection: ld.linear(names.EmbedVision+"embedding_projection", H, D), eps: float32(vc.RMSNormEps)},
	}
	if vc.Standardize {
		v.StdBias, v.StdScale = ld.tensor(p+"std_bias", D), ld.tensor(p+"std_scale", D)
	}
	for i := 0; i < vc.NumHiddenLayers && ld.err == nil; i++ {
		l := fmt.Sprintf("%sencoder.layers.%d.", p, i)
		clip := func(name string, out, in int) ClippableLinear {
			return ld.clippable(l+name, out, in, vc.UseClippedLinears)
		}
		v.Layers = append(v.Layers, &VisionLayer{
			InputLayernorm:           ld.tensor(l+"input_layernorm.weight", D),
			PostAttentionLayernorm:   ld.tensor(l+"post_attention_layernorm.weight", D),
			PreFeedforwardLayernorm:  ld.tensor(l+"pre_feedforward_layernorm.weight", D),
			PostFeedforwardLayernorm: ld.tensor(l+"post_feedforward_layernorm.weight", D),
			QProj:                    clip("self_attn.q_proj", vc.NumAttentionHeads*hd, D),
			KProj:                    clip("self_attn.k_proj", vc.NumKeyValueHeads*hd, D),
			VProj:                    clip("self_attn.v_proj", vc.NumKeyValueHeads*hd, D),
			OProj:                    clip("self_attn.o_proj", D, vc.NumAttentionHeads*hd),
			QNorm:                    ld.tensor(l+"self_attn.q_norm.weight", hd),
			KNorm:                    ld.tensor(l+"self_attn.k_norm.weight", hd),
			GateProj:                 clip("mlp.gate_proj", vc.IntermediateSize, D),
			UpProj:                   clip("mlp.up_proj", vc.IntermediateSize, D),
			DownProj:                 clip("mlp.down_proj", D, vc.IntermediateSize),
		})
	}
	if ld.err == nil && !vc.UseClippedLinears {
		ck.Skip(clipScalars(ck, p)...) // the reference drops them when clipping is off
	}
	return v, vc, ld.err
}

// clippable loads prefix.linear and, when clip is set, its four 0-d clip
// scalars (the audio tower always clips: mlx-vlm ignores its
// use_clipped_linears, and real E2B/E4B set it anyway).
func (ld *loader) clippable(prefix string, out, in int, clip bool) ClippableLinear {
	c := ClippableLinear{Linear: ld.linear(prefix+".linear", out, in)}
	if clip {
		scalar := func(name string) tensor.Tensor { return ld.tensor(prefix+"."+name, []int{}...) }
		c.InputMin, c.InputMax = scalar("input_min"), scalar("input_max")
		c.OutputMin, c.OutputMax = scalar("output_min"), scalar("output_max")
	}
	return c
}

func clipScalars(ck *checkpoint.Checkpoint, prefix string) []string {
	var out []string
	for _, n := range ck.Names() {
		for _, s := range []string{".input_min", ".input_max", ".output_min", ".output_max"} {
			if len(n) > len(prefix) && n[:len(prefix)] == prefix && len(n) > len(s) && n[len(n)-len(s):] == s {
				out = append(out, n)
			}
		}
	}
	return out
}
