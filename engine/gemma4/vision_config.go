package gemma4

import (
	"encoding/json"
	"fmt"
)

// VisionConfig is vision_config: the SigLIP-style tower (gemma4_vision) or
// the encoder-free embedder (gemma4_unified_vision).
type VisionConfig struct {
	ModelType         string  `json:"model_type"`
	RMSNormEps        float64 `json:"rms_norm_eps"`
	PatchSize         int     `json:"patch_size"`
	PoolingKernelSize int     `json:"pooling_kernel_size"`

	// gemma4_vision
	HiddenSize            int  `json:"hidden_size"`
	NumHiddenLayers       int  `json:"num_hidden_layers"`
	NumAttentionHeads     int  `json:"num_attention_heads"`
	NumKeyValueHeads      int  `json:"num_key_value_heads"`
	HeadDim               int  `json:"head_dim"`
	IntermediateSize      int  `json:"intermediate_size"`
	PositionEmbeddingSize int  `json:"position_embedding_size"`
	DefaultOutputLength   int  `json:"default_output_length"`
	Standardize           bool `json:"standardize"`
	UseClippedLinears     bool `json:"use_clipped_linears"`
	RopeParameters        struct {
		RopeTheta float64 `json:"rope_theta"`
	} `json:"rope_parameters"`

	// gemma4_unified_vision
	MMEmbedDim     int `json:"mm_embed_dim"`
	MMPosembSize   int `json:"mm_posemb_size"`
	ModelPatchSize int `json:"model_patch_size"`
	NumSoftTokens  int `json:"num_soft_tokens"`
	OutputProjDims int `json:"output_proj_dims"`
}

// Unified reports whether this is the encoder-free embedder.
func (v *VisionConfig) Unified() bool { return v.ModelType == "gemma4_unified_vision" }

// PatchPixels is the side of one patch vector (16 for SigLIP, 48 unified).
func (v *VisionConfig) PatchPixels() int {
	if v.Unified() {
		return v.ModelPatchSize
	}
	return v.PatchSize
}

// DefaultSoftTokens is the image budget when a request names none.
func (v *VisionConfig) DefaultSoftTokens() int {
	if v.Unified() {
		return v.NumSoftTokens
	}
	return v.DefaultOutputLength
}

// ParseVisionConfig reads vision_config; nil when the model has none.
func ParseVisionConfig(raw json.RawMessage) (*VisionConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("vision_config is not an object: %w", err)
	}
	v := &VisionConfig{}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("vision_config: %w", err)
	}
	common := []string{"model_type", "rms_norm_eps", "patch_size", "pooling_kernel_size"}
	var need []string
	switch v.ModelType {
	case "gemma4_vision":
		need = append(common, "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
			"head_dim", "intermediate_size", "position_embedding_size", "standardize", "rope_parameters")
	case "gemma4_unified_vision":
		need = append(common, "mm_embed_dim", "mm_posemb_size", "model_patch_size", "num_soft_tokens", "output_proj_dims")
	default:
		return nil, fmt.Errorf("vision_config.model_type %q is not supported", v.ModelType)
	}
	if err := requireKeys(keys, "vision_config", need...); err != nil {
		return nil, err
	}
	if v.PatchPixels() <= 0 || v.PoolingKernelSize <= 0 || v.RMSNormEps <= 0 {
		return nil, fmt.Errorf("vision_config: patch size, pooling kernel and rms_norm_eps must be positive")
	}
	if !v.Unified() {
		if v.HiddenSize <= 0 || v.NumHiddenLayers < 0 || v.NumAttentionHeads <= 0 || v.NumKeyValueHeads <= 0 ||
			v.HeadDim <= 0 || v.HeadDim%4 != 0 || v.NumAttentionHeads%v.NumKeyValueHeads != 0 ||
			v.IntermediateSize <= 0 || v.PositionEmbeddingSize <= 0 || v.RopeParameters.RopeTheta <= 0 {
			return nil, fmt.Errorf("vision_config: tower geometry is invalid (hidden %d, heads %d/%d, head_dim %d)",
				v.HiddenSize, v.NumAttentionHeads, v.NumKeyValueHeads, v.HeadDim)
		}
	} else if v.MMEmbedDim <= 0 || v.MMPosembSize <= 0 || v.OutputProjDims <= 0 {
		return nil, fmt.Errorf("vision_config: unified embedder sizes must be positive")
	}
	return v, nil
}
