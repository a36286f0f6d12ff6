package gemma4

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// AudioConfig is audio_config: the USM conformer tower (gemma4_audio,
// E2B/E4B) or the encoder-free embedder (gemma4_unified_audio, 12B).
type AudioConfig struct {
	ModelType      string  `json:"model_type"`
	RMSNormEps     float64 `json:"rms_norm_eps"`
	OutputProjDims *int    `json:"output_proj_dims"` // null: no output_proj (conformer)

	// gemma4_audio
	HiddenSize                  int     `json:"hidden_size"`
	NumHiddenLayers             int     `json:"num_hidden_layers"`
	NumAttentionHeads           int     `json:"num_attention_heads"`
	HiddenAct                   string  `json:"hidden_act"`
	SubsamplingConvChannels     []int   `json:"subsampling_conv_channels"`
	ConvKernelSize              int     `json:"conv_kernel_size"`
	ResidualWeight              float64 `json:"residual_weight"`
	AttentionChunkSize          int     `json:"attention_chunk_size"`
	AttentionContextLeft        int     `json:"attention_context_left"`
	AttentionContextRight       int     `json:"attention_context_right"`
	AttentionLogitCap           float64 `json:"attention_logit_cap"`
	AttentionInvalidLogitsValue float64 `json:"attention_invalid_logits_value"`
	GradientClipping            float64 `json:"gradient_clipping"`
	// UseClippedLinears is read but not used: mlx-vlm's audio ClippableLinears
	// always clip, whatever the flag says.
	UseClippedLinears bool `json:"use_clipped_linears"`

	// gemma4_unified_audio
	AudioSamplesPerToken int `json:"audio_samples_per_token"`
	AudioEmbedDim        int `json:"audio_embed_dim"`
}

// Audio model types.
const (
	AudioConformer = "gemma4_audio"
	AudioUnified   = "gemma4_unified_audio"
)

// melBins is the log-mel width the conformer takes (SubSampleConvProjection's
// INPUT_FEAT_SIZE; fixed for every Gemma-4 model).
const melBins = 128

// Unified reports whether this is the encoder-free embedder.
func (a *AudioConfig) Unified() bool { return a.ModelType == AudioUnified }

// EmbedDim is the width embed_audio projects from: the tower output
// (output_proj_dims, else hidden_size) or, unified, one waveform row.
func (a *AudioConfig) EmbedDim() int {
	if a.OutputProjDims != nil {
		return *a.OutputProjDims
	}
	return a.HiddenSize
}

// HeadDim is the conformer's attention head width.
func (a *AudioConfig) HeadDim() int { return a.HiddenSize / a.NumAttentionHeads }

// SubsampledFreq is the mel axis after the two stride-2 convolutions.
func (a *AudioConfig) SubsampledFreq() int {
	f := melBins
	for range 2 {
		f = (f+2-3)/2 + 1
	}
	return f
}

// ParseAudioConfig reads audio_config; nil when the model has none. Every
// field the tower uses must be present: the conformer and the unified
// embedder have different keys, and no default is assumed.
func ParseAudioConfig(raw json.RawMessage) (*AudioConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("audio_config is not an object: %w", err)
	}
	a := &AudioConfig{}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("audio_config: bad field: %w", err)
	}
	if err := requireKeys(keys, "audio_config", "model_type"); err != nil {
		return nil, err
	}
	need := []string{"rms_norm_eps", "output_proj_dims"}
	switch a.ModelType {
	case AudioConformer:
		need = append(need, "hidden_size", "num_hidden_layers", "num_attention_heads", "hidden_act",
			"subsampling_conv_channels", "conv_kernel_size", "residual_weight", "attention_chunk_size",
			"attention_context_left", "attention_context_right", "attention_logit_cap",
			"attention_invalid_logits_value", "gradient_clipping")
	case AudioUnified:
		need = append(need, "audio_samples_per_token")
	default:
		return nil, fmt.Errorf("audio_config.model_type %q is not supported (want %s or %s)", a.ModelType, AudioConformer, AudioUnified)
	}
	if err := requireKeys(keys, "audio_config", need...); err != nil {
		return nil, err
	}
	return a, a.validate()
}

func (a *AudioConfig) validate() error {
	var bad []string
	pos := func(name string, v int) {
		if v <= 0 {
			bad = append(bad, fmt.Sprintf("%s must be positive (is %d)", name, v))
		}
	}
	if a.RMSNormEps <= 0 || a.RMSNormEps > 1 || math.IsNaN(a.RMSNormEps) {
		bad = append(bad, "rms_norm_eps must be in (0, 1]")
	}
	if a.OutputProjDims != nil {
		pos("output_proj_dims", *a.OutputProjDims)
	}
	if a.Unified() {
		pos("audio_samples_per_token", a.AudioSamplesPerToken)
		if a.OutputProjDims == nil || *a.OutputProjDims != a.AudioSamplesPerToken {
			bad = append(bad, "output_proj_dims must equal audio_samples_per_token (embed_audio takes one waveform row)")
		}
		return audioConfigError(bad)
	}
	pos("hidden_size", a.HiddenSize)
	pos("num_hidden_layers", a.NumHiddenLayers)
	pos("num_attention_heads", a.NumAttentionHeads)
	pos("conv_kernel_size", a.ConvKernelSize)
	pos("attention_chunk_size", a.AttentionChunkSize)
	if a.NumAttentionHeads > 0 && a.HiddenSize%a.NumAttentionHeads != 0 {
		bad = append(bad, "hidden_size must be a multiple of num_attention_heads")
	}
	if a.HiddenSize%2 != 0 {
		bad = append(bad, "hidden_size must be even (sin/cos relative position signal)")
	}
	if a.HiddenAct != "silu" {
		bad = append(bad, fmt.Sprintf("hidden_act %q is not supported (want silu)", a.HiddenAct))
	}
	if len(a.SubsamplingConvChannels) != 2 || a.SubsamplingConvChannels[0] <= 0 || a.SubsamplingConvChannels[1] <= 0 {
		bad = append(bad, fmt.Sprintf("subsampling_conv_channels must be two positive sizes (is %v)", a.SubsamplingConvChannels))
	}
	if a.AttentionContextLeft < 0 || a.AttentionContextRight < 0 {
		bad = append(bad, "attention_context_left/right must not be negative")
	}
	if !(a.AttentionLogitCap > 0) || !(a.GradientClipping > 0) || math.IsNaN(a.AttentionInvalidLogitsValue) {
		bad = append(bad, "attention_logit_cap and gradient_clipping must be positive, attention_invalid_logits_value a number")
	}
	if math.IsNaN(a.ResidualWeight) || math.IsInf(a.ResidualWeight, 0) {
		bad = append(bad, "residual_weight must be finite")
	}
	return audioConfigError(bad)
}

func audioConfigError(bad []string) error {
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("invalid audio_config: %s", strings.Join(bad, "; "))
}
