package hub

import (
	"encoding/json"
	"fmt"
	"strings"
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
// DefaultContext), with the same estimate the fit check uses.
func (c CatalogEntry) RAMNeeded(contextLen int) int64 {
	e, err := EstimateMemory(c.config, Weights{Text: c.DiskBytes}, contextLen, Budget{})
	if err != nil {
		return 0
	}
	return e.Total
}

// Catalog returns the curated models, smallest first. Geometry follows the
// published configs (research gemma4.md §1.2, §1.3); sizes are the 4-bit
// mlx-community conversions (26B-A4B measured, others estimated at 4.5
// bits per weight with bf16 towers, gemma4.md §1.7).
func Catalog() []CatalogEntry {
	return []CatalogEntry{
		{Repo: "mlx-community/gemma-4-e2b-it-4bit", Name: "Gemma-4 E2B", Default: true,
			Summary:   "smallest; text, images, audio and video; fine on an 8 GB Mac",
			DiskBytes: 3_500_000_000, Vision: true, Audio: true, Video: true,
			config: gemmaConfig(1536, 35, 6144, 8, 1, 0, 512, 20, 256, true, 131072, 5, siglipSmall, true)},
		{Repo: "mlx-community/gemma-4-e4b-it-4bit", Name: "Gemma-4 E4B",
			Summary:   "better answers; text, images, audio and video; 16 GB Mac",
			DiskBytes: 5_100_000_000, Vision: true, Audio: true, Video: true,
			config: gemmaConfig(2560, 42, 10240, 8, 2, 0, 512, 18, 256, false, 131072, 6, siglipSmall, true)},
		{Repo: "mlx-community/gemma-4-12B-it-4bit", Name: "Gemma-4 12B",
			Summary:   "encoder-free images and audio; 16 GB Mac or more",
			DiskBytes: 7_000_000_000, Vision: true, Audio: true, Video: true,
			config: gemmaConfig(3840, 48, 15360, 16, 8, 1, 1024, 0, 0, false, 262144, 6, unifiedVision, true)},
		{Repo: "mlx-community/gemma-4-26b-a4b-it-4bit", Name: "Gemma-4 26B-A4B",
			Summary:   "mixture of experts, fast for its size; text, images and video; 32 GB Mac (15.34 GB measured)",
			DiskBytes: 15_340_000_000, Vision: true, Video: true,
			config: gemmaConfig(2816, 30, 2112, 16, 8, 2, 1024, 0, 0, false, 131072, 6, siglipLarge, false)},
		{Repo: "mlx-community/gemma-4-31b-it-4bit", Name: "Gemma-4 31B",
			Summary:   "largest and strongest; text, images and video; 32 GB Mac or more",
			DiskBytes: 18_000_000_000, Vision: true, Video: true,
			config: gemmaConfig(5376, 60, 21504, 32, 16, 4, 1024, 0, 0, false, 131072, 6, siglipLarge, false)},
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

var (
	siglipSmall   = map[string]any{"hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12, "pooling_kernel_size": 3}
	siglipLarge   = map[string]any{"hidden_size": 1152, "intermediate_size": 4304, "num_attention_heads": 16, "pooling_kernel_size": 3}
	unifiedVision = map[string]any{"mm_embed_dim": 3840, "pooling_kernel_size": 3}
)

// gemmaConfig writes a minimal config.json for a family; globalKV 0 is null.
func gemmaConfig(hidden, layers, inter, heads, kv, globalKV, window, shared, ple int, doubleWide bool,
	maxPos, fullEvery int, vision map[string]any, audio bool) []byte {
	types := make([]string, layers)
	for i := range types {
		types[i] = "sliding_attention"
		if (i+1)%fullEvery == 0 || i == layers-1 {
			types[i] = "full_attention"
		}
	}
	text := map[string]any{
		"hidden_size": hidden, "num_hidden_layers": layers, "intermediate_size": inter,
		"num_attention_heads": heads, "num_key_value_heads": kv, "num_global_key_value_heads": nil,
		"head_dim": 256, "global_head_dim": 512, "layer_types": types, "sliding_window": window,
		"num_kv_shared_layers": shared, "hidden_size_per_layer_input": ple, "use_double_wide_mlp": doubleWide,
		"vocab_size": 262144, "max_position_embeddings": maxPos, "dtype": "bfloat16",
	}
	if globalKV > 0 {
		text["num_global_key_value_heads"] = globalKV
	}
	cfg := map[string]any{"model_type": "gemma4", "text_config": text, "vision_config": vision, "audio_config": nil}
	if audio {
		cfg["audio_config"] = map[string]any{"hidden_size": 1024, "num_attention_heads": 8}
	}
	b, _ := json.Marshal(cfg)
	return b
}
