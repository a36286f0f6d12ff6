package hub

import (
	"encoding/json"
	"fmt"
	"strings"

	"perch/engine/gemma4"
)

// CatalogEntry is one curated model. This file is the one place the
// curated list lives; the CLI and the GUI's models view both read it.
type CatalogEntry struct {
	Repo      string // Hugging Face repo id
	Name      string // "Gemma-4 E2B"
	Summary   string
	DiskBytes int64 // download size (approximate unless noted in Summary)
	Vision    bool
	Audio     bool
	Video     bool
	Default   bool
	config    []byte // the family's text/tower geometry, for RAM estimates
}

// RAMNeeded estimates the memory the model needs at contextLen (0:
// DefaultContext) on the platform's default backend, with the estimate the
// fit check uses.
func (c CatalogEntry) RAMNeeded(contextLen int) int64 {
	d, err := gemma4.DescribeRemote(c.config, c.DiskBytes)
	if err != nil {
		return 0
	}
	return EstimateMemory(d, "", contextLen, Budget{}).Total
}

// Catalog returns the curated models, smallest first. Geometry follows the
// published configs (research gemma4.md §1.2, §1.3); sizes are the
// mlx-community conversions' tensor bytes, computed from the published
// shapes (engine/gemma4/synth's inventory, which reproduces the measured
// 26B-A4B repository byte for byte).
func Catalog() []CatalogEntry {
	return []CatalogEntry{
		{Repo: "mlx-community/gemma-4-e2b-it-4bit", Name: "Gemma-4 E2B", Default: true,
			Summary:   "smallest; text, images, audio and video; fine on an 8 GB Mac",
			DiskBytes: 3_550_352_326, Vision: true, Audio: true, Video: true, config: catalogConfig(e2b)},
		{Repo: "mlx-community/gemma-4-e4b-it-4bit", Name: "Gemma-4 E4B",
			Summary:   "better answers; text, images, audio and video; 16 GB Mac",
			DiskBytes: 5_146_448_340, Vision: true, Audio: true, Video: true, config: catalogConfig(e4b)},
		{Repo: "mlx-community/gemma-4-12B-it-8bit", Name: "Gemma-4 12B",
			Summary:   "encoder-free images and audio, 8-bit; 16 GB Mac or more",
			DiskBytes: 12_740_913_248, Vision: true, Audio: true, Video: true, config: catalogConfig(g12b)},
		{Repo: "mlx-community/gemma-4-26b-a4b-it-4bit", Name: "Gemma-4 26B-A4B",
			Summary:   "mixture of experts, fast for its size; text, images and video; 32 GB Mac",
			DiskBytes: 15_340_981_404, Vision: true, Video: true, config: catalogConfig(g26b)},
		{Repo: "mlx-community/gemma-4-31b-it-4bit", Name: "Gemma-4 31B",
			Summary:   "largest and strongest; text, images and video; 32 GB Mac or more",
			DiskBytes: 18_411_755_224, Vision: true, Video: true, config: catalogConfig(g31b)},
	}
}

// DefaultModel is the catalog's default entry.
func DefaultModel() CatalogEntry {
	for _, c := range Catalog() {
		if c.Default {
			return c
		}
	}
	return Catalog()[0]
}

// CatalogEntryFor returns the curated entry for a repo id (case-insensitive).
func CatalogEntryFor(repo string) (CatalogEntry, bool) {
	for _, c := range Catalog() {
		if strings.EqualFold(c.Repo, repo) {
			return c, true
		}
	}
	return CatalogEntry{}, false
}

// SuggestSmaller names the largest catalog model lighter than weights
// that fits b at contextLen, or "" when none does.
func SuggestSmaller(weights int64, contextLen int, b Budget) string {
	best := ""
	for _, c := range Catalog() {
		if c.DiskBytes < weights && c.RAMNeeded(contextLen) <= b.Usable {
			best = fmt.Sprintf("%s (%s, about %s of memory)", c.Repo, FormatBytes(c.DiskBytes), FormatBytes(c.RAMNeeded(contextLen)))
		}
	}
	return best
}

// family is the geometry of one published family (research §1.2, §1.3).
type family struct {
	hidden, layers, inter, heads, kv, globalKV int // globalKV 0: null
	window, shared, ple, fullEvery, maxPos     int
	doubleWide, kEqV                           bool
	moe                                        []int // experts, top-k, width
	vision                                     map[string]any
	audio                                      map[string]any
	bits                                       int
}

var (
	siglipSmall = map[string]any{"model_type": "gemma4_vision", "hidden_size": 768, "num_hidden_layers": 16, "num_attention_heads": 12,
		"num_key_value_heads": 12, "head_dim": 64, "intermediate_size": 3072, "patch_size": 16, "pooling_kernel_size": 3,
		"position_embedding_size": 10240, "default_output_length": 280, "standardize": false, "use_clipped_linears": true,
		"rms_norm_eps": 1e-6, "rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 100.0}}
	siglipLarge = map[string]any{"model_type": "gemma4_vision", "hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16,
		"num_key_value_heads": 16, "head_dim": 72, "intermediate_size": 4304, "patch_size": 16, "pooling_kernel_size": 3,
		"position_embedding_size": 10240, "default_output_length": 280, "standardize": true, "use_clipped_linears": false,
		"rms_norm_eps": 1e-6, "rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 100.0}}
	unifiedVision = map[string]any{"model_type": "gemma4_unified_vision", "mm_embed_dim": 3840, "mm_posemb_size": 1120,
		"model_patch_size": 48, "num_soft_tokens": 280, "output_proj_dims": 3840, "patch_size": 16, "pooling_kernel_size": 3, "rms_norm_eps": 1e-6}
	conformer = map[string]any{"model_type": "gemma4_audio", "hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 8,
		"hidden_act": "silu", "subsampling_conv_channels": []int{128, 32}, "conv_kernel_size": 5, "residual_weight": 0.5,
		"attention_chunk_size": 12, "attention_context_left": 13, "attention_context_right": 0, "attention_logit_cap": 50.0,
		"attention_invalid_logits_value": -1e9, "use_clipped_linears": true, "rms_norm_eps": 1e-6, "gradient_clipping": 1e10,
		"output_proj_dims": 1536}
	unifiedAudio = map[string]any{"model_type": "gemma4_unified_audio", "audio_samples_per_token": 640, "audio_embed_dim": 640,
		"hidden_size": 640, "output_proj_dims": 640, "rms_norm_eps": 1e-6}

	e2b  = family{1536, 35, 6144, 8, 1, 0, 512, 20, 256, 5, 131072, true, false, nil, siglipSmall, conformer, 4}
	e4b  = family{2560, 42, 10240, 8, 2, 0, 512, 18, 256, 6, 131072, false, false, nil, siglipSmall, conformer, 4}
	g12b = family{3840, 48, 15360, 16, 8, 1, 1024, 0, 0, 6, 262144, false, true, nil, unifiedVision, unifiedAudio, 8}
	g26b = family{2816, 30, 2112, 16, 8, 2, 1024, 0, 0, 6, 131072, false, true, []int{128, 8, 704}, siglipLarge, nil, 4}
	g31b = family{5376, 60, 21504, 32, 16, 4, 1024, 0, 0, 6, 131072, false, true, nil, siglipLarge, nil, 4}
)

// catalogConfig writes the config.json a family's mlx-community repo
// carries (the keys gemma4.ParseConfig needs).
func catalogConfig(f family) []byte {
	types := make([]string, f.layers)
	for i := range types {
		types[i] = "sliding_attention"
		if (i+1)%f.fullEvery == 0 || i == f.layers-1 {
			types[i] = "full_attention"
		}
	}
	text := map[string]any{
		"hidden_size": f.hidden, "num_hidden_layers": f.layers, "intermediate_size": f.inter,
		"num_attention_heads": f.heads, "num_key_value_heads": f.kv, "num_global_key_value_heads": nil,
		"head_dim": 256, "global_head_dim": 512, "layer_types": types, "sliding_window": f.window,
		"num_kv_shared_layers": f.shared, "hidden_size_per_layer_input": f.ple, "vocab_size_per_layer_input": 262144,
		"use_double_wide_mlp": f.doubleWide, "attention_k_eq_v": f.kEqV, "enable_moe_block": f.moe != nil,
		"vocab_size": 262144, "max_position_embeddings": f.maxPos, "final_logit_softcapping": 30.0, "rms_norm_eps": 1e-6,
		"hidden_activation": "gelu_pytorch_tanh", "dtype": "bfloat16", "tie_word_embeddings": true,
		"rope_parameters": map[string]any{
			"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 10000.0},
			"full_attention":    map[string]any{"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25},
		},
	}
	if f.globalKV > 0 {
		text["num_global_key_value_heads"] = f.globalKV
	}
	if f.moe != nil {
		text["num_experts"], text["top_k_experts"], text["moe_intermediate_size"] = f.moe[0], f.moe[1], f.moe[2]
	}
	cfg := map[string]any{"model_type": "gemma4", "text_config": text, "vision_config": f.vision, "audio_config": f.audio,
		"eos_token_id": []int{1, 106, 50}, "image_token_id": 258880, "audio_token_id": 258881, "video_token_id": 258884,
		"boi_token_id": 255999, "eoi_token_id": 258882, "boa_token_id": 256000, "eoa_token_id": 258883,
		"vision_soft_tokens_per_image": 280,
		"quantization":                 map[string]any{"group_size": 64, "bits": f.bits, "mode": "affine"}}
	if f.vision["model_type"] == "gemma4_unified_vision" {
		cfg["model_type"] = "gemma4_unified"
	}
	b, _ := json.Marshal(cfg)
	return b
}
