// Port of mlx-vlm's models/gemma4/audio.py (the USM conformer of E2B/E4B),
// embed_audio (models/gemma4/gemma4.py) and the encoder-free audio of
// models/gemma4_unified/gemma4_unified.py (12B).
//   - Activations run in float32 (f32 log-mel times bf16 weights promotes);
//     features come back float32, the caller casts them at the splice.
//   - Every ClippableLinear clips: mlx-vlm's audio tower ignores
//     use_clipped_linears.
//   - Masks are Go []bool, true = valid frame (the reference carries the
//     inverse), built on the host.
//   - Unified audio rows enter embed_audio in float32 as in mlx-vlm (HF
//     casts them to bf16).
package gemma4

import (
	"fmt"

	"perch/engine/tensor"
)

// audioNormEps is AudioRMSNorm's default eps: the reference passes
// rms_norm_eps only to the light-conv norms, the SSCP LayerNorms and embed_audio.
const audioNormEps = 1e-6

// AudioTower is audio_tower + embed_audio, or for the unified model
// embed_audio alone (SubsampleConvProjection nil).
type AudioTower struct {
	Cfg *AudioConfig
	b   tensor.Backend

	SubsampleConvProjection *SubSampleConvProjection
	Layers                  []*ConformerBlock
	OutputProj              *tensor.Linear // [output_proj_dims, H] + bias; nil without output_proj_dims
	EmbedAudio              Embedder

	relSignal tensor.Tensor // [S, H] float32 sin|cos of the relative positions P..-F
}

// SubSampleConvProjection reduces time and mel by 4 and projects to H.
type SubSampleConvProjection struct {
	Layer0, Layer1  SSCPConvBlock
	InputProjLinear *tensor.Linear // [H, SubsampledFreq*channels[1]]
}

// SSCPConvBlock is Conv2d 3x3 stride 2 (no bias) -> LayerNorm(channels) -> ReLU.
type SSCPConvBlock struct {
	Conv tensor.Tensor // conv.weight [C_out, 3, 3, C_in] (MLX layout)
	Norm tensor.Tensor // norm.weight [C_out]; the LayerNorm has no bias
}

// ConformerBlock is FFW -> attention -> light conv -> FFW -> norm.
type ConformerBlock struct {
	FeedForward1, FeedForward2         ConformerFeedForward
	SelfAttn                           AudioAttention
	Lconv1d                            ConformerLightConv1d
	NormPreAttn, NormPostAttn, NormOut tensor.Tensor // [H]
}

// ConformerFeedForward is the macaron half-step feed-forward.
type ConformerFeedForward struct {
	PreLayerNorm, PostLayerNorm tensor.Tensor   // [H]
	FfwLayer1                   ClippableLinear // [4H, H]
	FfwLayer2                   ClippableLinear // [H, 4H]
}

// ConformerLightConv1d is GLU -> causal depthwise conv -> norm -> SiLU -> linear.
type ConformerLightConv1d struct {
	PreLayerNorm, ConvNorm tensor.Tensor   // [H]
	LinearStart            ClippableLinear // [2H, H]
	LinearEnd              ClippableLinear // [H, H]
	DepthwiseConv1d        tensor.Tensor   // weight [H, K, 1] (MLX layout)
}

// Encode runs the conformer over a log-mel [1, T, 128] (any float dtype)
// with valid[t] true for real frames, and returns the soft tokens
// [1, T', H_text] float32 (T' = ceil(ceil(T/2)/2)) and their validity.
// Invalid frames come out as zero rows; the caller keeps or drops them.
func (a *AudioTower) Encode(mel tensor.Tensor, valid []bool) (tensor.Tensor, []bool, error) {
	h, validOut, err := a.Forward(mel, valid)
	if err != nil {
		return nil, nil, err
	}
	feats := a.b.AsType(a.EmbedAudio.forward(a.b, h), tensor.Float32)
	if err := a.b.Err(); err != nil {
		return nil, nil, fmt.Errorf("embed_audio: %w", err)
	}
	return feats, validOut, nil
}

// Forward is audio_tower: the conformer output [1, T', output_proj_dims]
// float32 with invalid frames zeroed, before embed_audio.
func (a *AudioTower) Forward(mel tensor.Tensor, valid []bool) (tensor.Tensor, []bool, error) {
	b := a.b
	x, valid, err := a.Subsample(mel, valid) // [1, T', H]
	if err != nil {
		return nil, nil, err
	}
	T := len(valid)
	attnMask := a.attentionMask(valid)
	keep := b.FromFloat32(a.keepMask(valid), []int{1, T, 1}, tensor.Float32)
	for _, l := range a.Layers {
		mark := b.Mark()
		x = l.forward(a, x, attnMask, keep, T)
		b.SweepSince(mark, x) // intermediates live only as long as the graph needs them
	}
	if a.OutputProj != nil {
		x = b.Linear(x, a.OutputProj)
	}
	x = b.Where(b.FromBool(valid, []int{1, T, 1}), x, b.Scalar(0, x.DType()))
	if err := b.Err(); err != nil {
		return nil, nil, fmt.Errorf("audio tower: %w", err)
	}
	return x, valid, nil
}

// Subsample is subsample_conv_projection over a log-mel [1, T, 128]:
// [1, T', H] float32 and the subsampled frame flags (valid[::2], twice).
func (a *AudioTower) Subsample(mel tensor.Tensor, valid []bool) (tensor.Tensor, []bool, error) {
	b := a.b
	if a.SubsampleConvProjection == nil {
		return nil, nil, fmt.Errorf("audio: this model's audio is encoder-free; pass the waveform to EncodeWaveform")
	}
	if err := b.Err(); err != nil {
		return nil, nil, fmt.Errorf("audio tower: backend already failed: %w", err)
	}
	s := mel.Shape()
	if len(s) != 3 || s[0] != 1 || s[1] < 1 || s[2] != melBins || !mel.DType().IsFloat() {
		return nil, nil, fmt.Errorf("audio tower: log-mel must be float [1, T>=1, %d], got %v %v", melBins, mel.DType(), s)
	}
	if len(valid) != s[1] {
		return nil, nil, fmt.Errorf("audio tower: %d frame flags for %d frames", len(valid), s[1])
	}
	x, valid := a.SubsampleConvProjection.forward(a, b.AsType(mel, tensor.Float32), valid)
	if err := b.Err(); err != nil {
		return nil, nil, fmt.Errorf("audio tower: subsample_conv_projection: %w", err)
	}
	return x, valid, nil
}

// EncodeWaveform is the unified model's audio: the 16 kHz waveform is
// zero-padded to a multiple of audio_samples_per_token and cut into rows,
// one per soft token; returns [1, ceil(len/spt), H_text] float32.
func (a *AudioTower) EncodeWaveform(samples []float32) (tensor.Tensor, error) {
	b, cfg := a.b, a.Cfg
	if !cfg.Unified() {
		return nil, fmt.Errorf("audio: this model has a conformer tower; pass the log-mel to Encode")
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("unified audio: backend already failed: %w", err)
	}
	spt := cfg.AudioSamplesPerToken
	n := (len(samples) + spt - 1) / spt
	if n == 0 {
		return nil, fmt.Errorf("unified audio: the waveform is empty")
	}
	rows := make([]float32, n*spt)
	copy(rows, samples)
	x := b.FromFloat32(rows, []int{1, n, spt}, tensor.Float32) // [1, n, spt]
	feats := b.AsType(a.EmbedAudio.forward(b, x), tensor.Float32)
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("unified audio: %w", err)
	}
	return feats, nil
}

func (s *SubSampleConvProjection) forward(a *AudioTower, mel tensor.Tensor, valid []bool) (tensor.Tensor, []bool) {
	b, cfg := a.b, a.Cfg
	// [1, T, F, 1] channels-last -> [1, T/2, 64, C0] -> [1, T/4, 32, C1]
	x := b.Reshape(mel, 1, len(valid), melBins, 1)
	x, valid = s.Layer0.forward(a, x, valid)
	x, valid = s.Layer1.forward(a, x, valid)
	// [1, T', 32*C1], index f*C1 + c
	x = b.Reshape(x, 1, len(valid), cfg.SubsampledFreq()*cfg.SubsamplingConvChannels[1])
	return b.Linear(x, s.InputProjLinear), valid
}

func (c *SSCPConvBlock) forward(a *AudioTower, x tensor.Tensor, valid []bool) (tensor.Tensor, []bool) {
	b := a.b
	T := len(valid)
	x = b.Where(b.FromBool(valid, []int{1, T, 1, 1}), x, b.Scalar(0, x.DType()))
	x = b.Pad(b.Pad(x, 1, 1, 1, 0), 2, 1, 1, 0)
	x = b.Conv2D(x, c.Conv, 2, 2, 0, 0) // [1, T', F', C_out]
	out := make([]bool, (T-1)/2+1)      // mask[::2][:T']
	for i := range out {
		out[i] = valid[2*i]
	}
	x = b.LayerNorm(x, c.Norm, nil, float32(a.Cfg.RMSNormEps))
	return b.Maximum(x, b.Scalar(0, x.DType())), out
}

func (l *ConformerBlock) forward(a *AudioTower, x, attnMask, keep tensor.Tensor, T int) tensor.Tensor {
	b := a.b
	x = l.FeedForward1.forward(a, x)

	residual := x
	x = a.clipGrad(x)
	x = b.RMSNorm(x, l.NormPreAttn, audioNormEps)
	x = l.SelfAttn.forward(a, x, attnMask, T)
	x = a.clipGrad(x)
	x = b.Add(residual, b.RMSNorm(x, l.NormPostAttn, audioNormEps))

	x = b.Mul(x, b.AsType(keep, x.DType())) // zero invalid frames before the conv
	x = l.Lconv1d.forward(a, x)
	x = l.FeedForward2.forward(a, x)
	x = a.clipGrad(x)
	return b.RMSNorm(x, l.NormOut, audioNormEps)
}

func (f *ConformerFeedForward) forward(a *AudioTower, x tensor.Tensor) tensor.Tensor {
	b := a.b
	residual := x
	x = a.clipGrad(x)
	x = b.RMSNorm(x, f.PreLayerNorm, audioNormEps)
	x = f.FfwLayer1.forward(b, x)
	x = a.silu(x)
	x = f.FfwLayer2.forward(b, x)
	x = a.clipGrad(x)
	x = b.RMSNorm(x, f.PostLayerNorm, audioNormEps)
	return b.Add(residual, b.Mul(x, b.Scalar(a.Cfg.ResidualWeight, x.DType())))
}

func (c *ConformerLightConv1d) forward(a *AudioTower, x tensor.Tensor) tensor.Tensor {
	b, cfg := a.b, a.Cfg
	H, K := cfg.HiddenSize, cfg.ConvKernelSize
	eps := float32(cfg.RMSNormEps)
	residual := x
	x = b.RMSNorm(x, c.PreLayerNorm, eps)
	x = c.LinearStart.forward(b, x)                                  // [1, T, 2H]
	x = b.Mul(b.Slice(x, 2, 0, H), b.Sigmoid(b.Slice(x, 2, H, 2*H))) // GLU
	x = b.Pad(x, 1, K-1, 0, 0)                                       // causal
	x = b.Conv1D(x, c.DepthwiseConv1d, 1, 0, H)                      // [1, T, H]
	x = a.clipGrad(x)
	x = b.RMSNorm(x, c.ConvNorm, eps)
	x = a.silu(x)
	x = c.LinearEnd.forward(b, x)
	return b.Add(x, residual)
}

// clipGrad is mx.clip(x, -gradient_clipping, gradient_clipping).
func (a *AudioTower) clipGrad(x tensor.Tensor) tensor.Tensor {
	b, g := a.b, a.Cfg.GradientClipping
	return b.Minimum(b.Maximum(x, b.Scalar(-g, x.DType())), b.Scalar(g, x.DType()))
}

// silu is nn.silu: x * sigmoid(x).
func (a *AudioTower) silu(x tensor.Tensor) tensor.Tensor { return a.b.Mul(x, a.b.Sigmoid(x)) }

func (a *AudioTower) keepMask(valid []bool) []float32 {
	out := make([]float32, len(valid))
	for i, v := range valid {
		if v {
			out[i] = 1
		}
	}
	return out
}
