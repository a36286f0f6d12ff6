package gemma4

import (
	"fmt"
	"slices"

	"perch/engine/checkpoint"
	"perch/engine/tensor"
)

// LoadAudio binds the audio tower (or the unified embedder) of an open
// checkpoint; nil, nil when the config has no audio_config. Conv weights
// may be in the MLX layout of converted checkpoints or in PyTorch's, which
// is transposed on load as mlx-vlm's sanitize does.
func LoadAudio(b tensor.Backend, ck *checkpoint.Checkpoint, cfg *Config) (*AudioTower, error) {
	ac := cfg.Audio
	if ac == nil {
		return nil, nil
	}
	names := findLayout(ck.Has)
	if !ck.Has(names.EmbedAudio + "embedding_projection.weight") {
		return nil, fmt.Errorf("checkpoint %s has audio_config but no %s", ck.Dir, probeAudio)
	}
	ld := &loader{ck: ck, b: b, cfg: cfg}
	a := &AudioTower{Cfg: ac, b: b}
	a.EmbedAudio = Embedder{
		EmbeddingProjection: ld.linear(names.EmbedAudio+"embedding_projection", cfg.Text.HiddenSize, ac.EmbedDim()),
		eps:                 float32(ac.RMSNormEps),
	}
	if !ac.Unified() {
		ld.conformer(a, names.Audio)
	}
	if ld.err != nil {
		return nil, fmt.Errorf("load audio: %w", ld.err)
	}
	if !ac.Unified() {
		_, P, F, _ := a.attentionGeometry()
		a.relSignal = audioRelativeSignal(b, ac, P, F)
		if err := b.Eval(a.relSignal); err != nil {
			return nil, fmt.Errorf("load audio: relative position table: %w", err)
		}
		b.Pin(a.relSignal)
	}
	return a, nil
}

func (ld *loader) conformer(a *AudioTower, p string) {
	ac := a.Cfg
	H, ch := ac.HiddenSize, ac.SubsamplingConvChannels
	sp := p + "subsample_conv_projection."
	a.SubsampleConvProjection = &SubSampleConvProjection{
		Layer0: SSCPConvBlock{
			Conv: ld.audioConv(sp+"layer0.conv.weight", []int{ch[0], 3, 3, 1}, 0, 2, 3, 1),
			Norm: ld.tensor(sp+"layer0.norm.weight", ch[0]),
		},
		Layer1: SSCPConvBlock{
			Conv: ld.audioConv(sp+"layer1.conv.weight", []int{ch[1], 3, 3, ch[0]}, 0, 2, 3, 1),
			Norm: ld.tensor(sp+"layer1.norm.weight", ch[1]),
		},
		InputProjLinear: ld.linear(sp+"input_proj_linear", H, ac.SubsampledFreq()*ch[1]),
	}
	for i := 0; i < ac.NumHiddenLayers && ld.err == nil; i++ {
		a.Layers = append(a.Layers, ld.conformerBlock(ac, fmt.Sprintf("%slayers.%d.", p, i)))
	}
	if out := ac.OutputProjDims; out != nil {
		a.OutputProj = ld.linear(p+"output_proj", *out, H)
		if ld.err == nil && (a.OutputProj.Bias == nil || !slices.Equal(a.OutputProj.Bias.Shape(), []int{*out})) {
			ld.err = fmt.Errorf("checkpoint %s: %soutput_proj needs a bias of shape [%d]", ld.ck.Dir, p, *out)
		}
	}
}

func (ld *loader) conformerBlock(ac *AudioConfig, p string) *ConformerBlock {
	H := ac.HiddenSize
	ffw := func(q string) ConformerFeedForward {
		return ConformerFeedForward{
			PreLayerNorm:  ld.tensor(q+"pre_layer_norm.weight", H),
			FfwLayer1:     ld.clippable(q+"ffw_layer_1", 4*H, H, true),
			FfwLayer2:     ld.clippable(q+"ffw_layer_2", H, 4*H, true),
			PostLayerNorm: ld.tensor(q+"post_layer_norm.weight", H),
		}
	}
	return &ConformerBlock{
		FeedForward1: ffw(p + "feed_forward1."),
		SelfAttn: AudioAttention{
			QProj:         ld.clippable(p+"self_attn.q_proj", H, H, true),
			KProj:         ld.clippable(p+"self_attn.k_proj", H, H, true),
			VProj:         ld.clippable(p+"self_attn.v_proj", H, H, true),
			Post:          ld.clippable(p+"self_attn.post", H, H, true),
			RelativeKProj: ld.linear(p+"self_attn.relative_k_proj", H, H),
			PerDimScale:   ld.tensor(p+"self_attn.per_dim_scale", ac.HeadDim()),
		},
		Lconv1d: ConformerLightConv1d{
			PreLayerNorm:    ld.tensor(p+"lconv1d.pre_layer_norm.weight", H),
			LinearStart:     ld.clippable(p+"lconv1d.linear_start", 2*H, H, true),
			DepthwiseConv1d: ld.audioConv(p+"lconv1d.depthwise_conv1d.weight", []int{H, ac.ConvKernelSize, 1}, 0, 2, 1),
			ConvNorm:        ld.tensor(p+"lconv1d.conv_norm.weight", H),
			LinearEnd:       ld.clippable(p+"lconv1d.linear_end", H, H, true),
		},
		FeedForward2: ffw(p + "feed_forward2."),
		NormPreAttn:  ld.tensor(p+"norm_pre_attn.weight", H),
		NormPostAttn: ld.tensor(p+"norm_post_attn.weight", H),
		NormOut:      ld.tensor(p+"norm_out.weight", H),
	}
}

// audioConv loads a conv weight stored in the MLX layout mlx, or in the
// PyTorch layout that perm (PyTorch axes in MLX order) maps onto it.
func (ld *loader) audioConv(name string, mlx []int, perm ...int) tensor.Tensor {
	if ld.err != nil {
		return nil
	}
	info, ok := ld.ck.Info(name)
	if !ok || slices.Equal(info.Shape, mlx) {
		return ld.tensor(name, mlx...)
	}
	torch := make([]int, len(mlx))
	for i, p := range perm {
		torch[p] = mlx[i]
	}
	if !slices.Equal(info.Shape, torch) {
		ld.err = fmt.Errorf("checkpoint %s: tensor %q has shape %v; the config needs %v (MLX layout) or %v (PyTorch layout)",
			ld.ck.Dir, name, info.Shape, mlx, torch)
		return nil
	}
	raw := ld.tensor(name, torch...)
	if ld.err != nil {
		return nil
	}
	w := ld.b.Transpose(raw, perm...)
	if err := ld.b.Eval(w); err != nil {
		ld.err = fmt.Errorf("tensor %q: to the MLX conv layout: %w", name, err)
		return nil
	}
	ld.b.Pin(w)
	ld.b.Unpin(raw)
	return w
}
