// Package gemma4 is the Gemma-4 model family written against tensor.Backend:
// config, weights (every checkpoint layout's tensor names in one table,
// names.go), the text decoder (E2B/E4B, 12B unified, 26B-A4B, 31B) and,
// beside it, the vision and audio towers and the adapters.
//
// Data flows one way: a checkpoint folder in (Load), then ids or embeddings
// and caches in, logits out; prepared attachments (Media, made by
// engine/gemma4/processor, which reads this package's Config) go through
// their frozen towers (EncodeMedia) and are spliced into the embeddings
// (Splice). It never tokenizes, decodes a file or samples.
package gemma4

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RoPEParams is one entry of text_config.rope_parameters.
type RoPEParams struct {
	RopeType            string  `json:"rope_type"`
	RopeTheta           float64 `json:"rope_theta"`
	PartialRotaryFactor float64 `json:"partial_rotary_factor"`
	Factor              float64 `json:"factor"`
}

// TextConfig is text_config (or the flat config of a text-only repo).
type TextConfig struct {
	ModelType                 string                `json:"model_type"`
	HiddenSize                int                   `json:"hidden_size"`
	NumHiddenLayers           int                   `json:"num_hidden_layers"`
	IntermediateSize          int                   `json:"intermediate_size"`
	NumAttentionHeads         int                   `json:"num_attention_heads"`
	NumKeyValueHeads          int                   `json:"num_key_value_heads"`
	NumGlobalKeyValueHeads    *int                  `json:"num_global_key_value_heads"`
	HeadDim                   int                   `json:"head_dim"`
	GlobalHeadDim             int                   `json:"global_head_dim"`
	LayerTypes                []string              `json:"layer_types"`
	SlidingWindow             int                   `json:"sliding_window"`
	NumKVSharedLayers         int                   `json:"num_kv_shared_layers"`
	HiddenSizePerLayerInput   int                   `json:"hidden_size_per_layer_input"`
	VocabSize                 int                   `json:"vocab_size"`
	VocabSizePerLayerInput    int                   `json:"vocab_size_per_layer_input"`
	UseDoubleWideMLP          bool                  `json:"use_double_wide_mlp"`
	AttentionKEqV             bool                  `json:"attention_k_eq_v"`
	EnableMoEBlock            bool                  `json:"enable_moe_block"`
	NumExperts                int                   `json:"num_experts"`
	TopKExperts               int                   `json:"top_k_experts"`
	MoEIntermediateSize       int                   `json:"moe_intermediate_size"`
	FinalLogitSoftcapping     float64               `json:"final_logit_softcapping"`
	RMSNormEps                float64               `json:"rms_norm_eps"`
	RopeParameters            map[string]RoPEParams `json:"rope_parameters"`
	UseBidirectionalAttention string                `json:"use_bidirectional_attention"`
	MaxPositionEmbeddings     int                   `json:"max_position_embeddings"`
	HiddenActivation          string                `json:"hidden_activation"`
	AttentionBias             bool                  `json:"attention_bias"`
	TieWordEmbeddings         *bool                 `json:"tie_word_embeddings"`
	PadTokenID                int                   `json:"pad_token_id"`
}

// Quant is one quantization entry: the default or a per-module override.
type Quant struct {
	GroupSize int    `json:"group_size"`
	Bits      int    `json:"bits"`
	Mode      string `json:"mode"`
}

// Config is config.json.
type Config struct {
	ModelType       string          `json:"model_type"`
	Architectures   []string        `json:"architectures"`
	Text            TextConfig      `json:"-"`
	VisionConfig    json.RawMessage `json:"vision_config"`
	AudioConfig     json.RawMessage `json:"audio_config"`
	ImageTokenID    int32           `json:"image_token_id"`
	AudioTokenID    int32           `json:"audio_token_id"`
	VideoTokenID    int32           `json:"video_token_id"`
	BOITokenID      int32           `json:"boi_token_id"`
	EOITokenID      int32           `json:"eoi_token_id"`
	BOATokenID      int32           `json:"boa_token_id"`
	EOATokenID      int32           `json:"eoa_token_id"`
	SoftTokensImage int             `json:"vision_soft_tokens_per_image"`
	EOSTokenIDs     []int32         `json:"-"`
	// Vision and Audio are the parsed tower configs (nil without them).
	Vision *VisionConfig `json:"-"`
	Audio  *AudioConfig  `json:"-"`
	// Unrecognized lists config keys no parser here reads or knowingly
	// ignores ("text_config.foo"): a newer or foreign checkpoint.
	Unrecognized []string `json:"-"`
	raw          []byte
	// Quantization: the default (Bits 0 when unquantized) and overrides by
	// module path; a nil override value means "not quantized".
	Quant          Quant
	QuantOverrides map[string]*Quant
}

// Dir-level file name.
const ConfigFile = "config.json"

// LoadConfig reads and validates dir/config.json.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// maxConfigBytes caps config.json; real ones are a few KB.
const maxConfigBytes = 4 << 20

// ParseConfig parses config.json bytes. Every field the model needs must be
// present: defaults differ between references and some are wrong for real
// checkpoints, so none is assumed.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("config is %d bytes, over the %d-byte limit", len(data), maxConfigBytes)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	c := &Config{raw: data}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("bad field: %w", err)
	}
	textRaw, nested := top["text_config"]
	nested = nested && string(textRaw) != "null"
	textKeys := top // a flat text-only config
	if nested {
		// A map of its own: top-level fields must not be overwritten by
		// text_config's (top-level eos_token_id [1, 106] beats text_config's 1).
		textKeys = map[string]json.RawMessage{}
		if err := json.Unmarshal(textRaw, &textKeys); err != nil {
			return nil, fmt.Errorf("text_config is not an object: %w", err)
		}
	} else {
		textRaw = data
	}
	if err := json.Unmarshal(textRaw, &c.Text); err != nil {
		return nil, fmt.Errorf("text_config: bad field: %w", err)
	}
	where := "text_config"
	if !nested {
		where = "config"
	}
	if err := requireKeys(textKeys, where, textRequired...); err != nil {
		return nil, err
	}
	if c.Text.EnableMoEBlock {
		if err := requireKeys(textKeys, where, "num_experts", "top_k_experts", "moe_intermediate_size"); err != nil {
			return nil, err
		}
	}
	if c.Text.HiddenSizePerLayerInput > 0 {
		if err := requireKeys(textKeys, where, "vocab_size_per_layer_input"); err != nil {
			return nil, err
		}
	}
	if err := parseEOS(top, textKeys, c); err != nil {
		return nil, err
	}
	if raw, ok := top["tie_word_embeddings"]; ok && nested && string(raw) != "null" {
		var tie bool
		if err := json.Unmarshal(raw, &tie); err != nil {
			return nil, fmt.Errorf("tie_word_embeddings: %w", err)
		}
		c.Text.TieWordEmbeddings = &tie // the top level wins over text_config
	}
	if err := parseQuant(top, c); err != nil {
		return nil, err
	}
	if c.Text.ModelType == "" {
		c.Text.ModelType = c.ModelType
	}
	if hasObject(top, "vision_config") || hasObject(top, "audio_config") {
		if err := requireKeys(top, "config", "image_token_id", "boi_token_id", "eoi_token_id"); err != nil {
			return nil, err
		}
	}
	if hasObject(top, "audio_config") {
		if err := requireKeys(top, "config", "audio_token_id", "boa_token_id"); err != nil {
			return nil, err
		}
		if _, ok := top["eoa_token_id"]; !ok {
			if err := json.Unmarshal(top["eoa_token_index"], &c.EOATokenID); err != nil {
				return nil, fmt.Errorf("config is missing eoa_token_id (or eoa_token_index)")
			}
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := c.parseTowers(); err != nil {
		return nil, err
	}
	c.Unrecognized = unrecognizedKeys(top, textKeys, nested)
	return c, nil
}

// parseTowers parses vision_config and audio_config. A vision tower
// without default_output_length (configs re-saved by newer transformers
// drop it) takes the top-level vision_soft_tokens_per_image.
func (c *Config) parseTowers() error {
	var err error
	if c.Vision, err = ParseVisionConfig(c.VisionConfig); err != nil {
		return err
	}
	if v := c.Vision; v != nil && !v.Unified() && v.DefaultOutputLength <= 0 {
		if c.SoftTokensImage <= 0 {
			return fmt.Errorf("vision_config has no default_output_length and config no vision_soft_tokens_per_image")
		}
		v.DefaultOutputLength = c.SoftTokensImage
	}
	c.Audio, err = ParseAudioConfig(c.AudioConfig)
	return err
}

var textRequired = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads",
	"num_key_value_heads", "head_dim", "global_head_dim", "layer_types", "sliding_window",
	"num_kv_shared_layers", "hidden_size_per_layer_input", "vocab_size", "use_double_wide_mlp",
	"attention_k_eq_v", "enable_moe_block", "final_logit_softcapping", "rms_norm_eps",
	"rope_parameters", "hidden_activation",
}

func hasObject(m map[string]json.RawMessage, key string) bool {
	v, ok := m[key]
	return ok && strings.HasPrefix(strings.TrimSpace(string(v)), "{")
}

func requireKeys(m map[string]json.RawMessage, where string, keys ...string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s is missing required field(s): %s", where, strings.Join(missing, ", "))
	}
	return nil
}

// parseEOS reads eos_token_id (an int or a list) at the top, else in text_config.
func parseEOS(top, text map[string]json.RawMessage, c *Config) error {
	raw, ok := top["eos_token_id"]
	if !ok {
		raw, ok = text["eos_token_id"]
	}
	if !ok {
		return fmt.Errorf("config has no eos_token_id")
	}
	ids, err := IntOrList(raw)
	if err != nil {
		return fmt.Errorf("eos_token_id: %w", err)
	}
	c.EOSTokenIDs = ids
	return nil
}

// IntOrList decodes a JSON integer or list of integers.
func IntOrList(raw json.RawMessage) ([]int32, error) {
	var one int32
	if err := json.Unmarshal(raw, &one); err == nil {
		return []int32{one}, nil
	}
	var many []int32
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("want an integer or a list of integers, got %s", truncate(raw))
	}
	return many, nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func parseQuant(top map[string]json.RawMessage, c *Config) error {
	raw, ok := top["quantization"]
	if !ok {
		raw, ok = top["quantization_config"]
	}
	if !ok || string(raw) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("quantization is not an object: %w", err)
	}
	c.QuantOverrides = map[string]*Quant{}
	for k, v := range m {
		switch k {
		case "group_size":
			if err := json.Unmarshal(v, &c.Quant.GroupSize); err != nil {
				return fmt.Errorf("quantization.group_size: %w", err)
			}
		case "bits":
			if err := json.Unmarshal(v, &c.Quant.Bits); err != nil {
				return fmt.Errorf("quantization.bits: %w", err)
			}
		case "mode":
			if err := json.Unmarshal(v, &c.Quant.Mode); err != nil {
				return fmt.Errorf("quantization.mode: %w", err)
			}
		default:
			if string(v) == "false" {
				c.QuantOverrides[k] = nil
				continue
			}
			var q Quant
			if err := json.Unmarshal(v, &q); err != nil {
				continue // other scalar settings of the quantizer
			}
			c.QuantOverrides[k] = &q
		}
	}
	if c.Quant.Mode != "" && c.Quant.Mode != "affine" {
		return fmt.Errorf("quantization mode %q is not supported (only MLX affine 4/8-bit)", c.Quant.Mode)
	}
	return nil
}

func (c *Config) validate() error {
	t := &c.Text
	var bad []string
	pos := func(name string, v int) {
		if v <= 0 {
			bad = append(bad, fmt.Sprintf("%s must be positive (is %d)", name, v))
		}
	}
	pos("hidden_size", t.HiddenSize)
	pos("num_hidden_layers", t.NumHiddenLayers)
	pos("intermediate_size", t.IntermediateSize)
	pos("num_attention_heads", t.NumAttentionHeads)
	pos("num_key_value_heads", t.NumKeyValueHeads)
	pos("head_dim", t.HeadDim)
	pos("global_head_dim", t.GlobalHeadDim)
	pos("sliding_window", t.SlidingWindow)
	pos("vocab_size", t.VocabSize)
	if len(t.LayerTypes) != t.NumHiddenLayers {
		bad = append(bad, fmt.Sprintf("layer_types has %d entries for %d layers", len(t.LayerTypes), t.NumHiddenLayers))
	}
	for i, lt := range t.LayerTypes {
		if lt != "sliding_attention" && lt != "full_attention" {
			bad = append(bad, fmt.Sprintf("layer_types[%d] is %q", i, lt))
		}
	}
	if t.NumKVSharedLayers < 0 || (t.NumKVSharedLayers > 0 && t.NumKVSharedLayers >= t.NumHiddenLayers) {
		bad = append(bad, fmt.Sprintf("num_kv_shared_layers %d out of range", t.NumKVSharedLayers))
	}
	if len(t.LayerTypes) == t.NumHiddenLayers && len(bad) == 0 {
		for i := t.FirstShared(); i < t.NumHiddenLayers; i++ {
			if t.KVDonor(i) < 0 {
				bad = append(bad, fmt.Sprintf("KV-shared layer %d has no earlier %s layer to share with", i, t.LayerTypes[i]))
				break
			}
		}
	}
	if t.NumAttentionHeads > 0 && t.NumKeyValueHeads > 0 && t.NumAttentionHeads%t.NumKeyValueHeads != 0 {
		bad = append(bad, "num_attention_heads must be a multiple of num_key_value_heads")
	}
	if t.HiddenActivation != "gelu_pytorch_tanh" {
		bad = append(bad, fmt.Sprintf("hidden_activation %q is not supported (want gelu_pytorch_tanh)", t.HiddenActivation))
	}
	for _, kind := range []string{"sliding_attention", "full_attention"} {
		rp, ok := t.RopeParameters[kind]
		if !ok {
			bad = append(bad, "rope_parameters."+kind+" is missing")
			continue
		}
		if rp.RopeTheta <= 0 {
			bad = append(bad, "rope_parameters."+kind+".rope_theta must be positive")
		}
		if rp.RopeType != "default" && rp.RopeType != "proportional" {
			bad = append(bad, fmt.Sprintf("rope_parameters.%s.rope_type %q is not supported", kind, rp.RopeType))
		}
		if rp.RopeType == "proportional" && (rp.PartialRotaryFactor <= 0 || rp.PartialRotaryFactor > 1) {
			bad = append(bad, "rope_parameters."+kind+".partial_rotary_factor must be in (0, 1]")
		}
	}
	if t.EnableMoEBlock && (t.NumExperts <= 0 || t.TopKExperts <= 0 || t.TopKExperts > t.NumExperts || t.MoEIntermediateSize <= 0) {
		bad = append(bad, "MoE needs num_experts > 0, 0 < top_k_experts <= num_experts, moe_intermediate_size > 0")
	}
	if t.HiddenSizePerLayerInput < 0 {
		bad = append(bad, "hidden_size_per_layer_input must not be negative")
	}
	if t.HiddenSizePerLayerInput > 0 && t.VocabSizePerLayerInput <= 0 {
		bad = append(bad, "vocab_size_per_layer_input must be positive with per-layer inputs")
	}
	if t.RMSNormEps <= 0 || t.RMSNormEps > 1 || math.IsNaN(t.RMSNormEps) {
		bad = append(bad, "rms_norm_eps must be in (0, 1]")
	}
	if t.FinalLogitSoftcapping < 0 {
		bad = append(bad, "final_logit_softcapping must not be negative")
	}
	if t.AttentionBias {
		bad = append(bad, "attention_bias true is not supported")
	}
	if c.Quant.Bits != 0 && c.Quant.Bits != 4 && c.Quant.Bits != 8 {
		bad = append(bad, fmt.Sprintf("quantization.bits %d is not supported (4 or 8)", c.Quant.Bits))
	}
	if len(c.EOSTokenIDs) == 0 {
		bad = append(bad, "eos_token_id is empty")
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("invalid config: %s", strings.Join(bad, "; "))
	}
	return nil
}

// IsFull reports whether layer i uses full (global) attention.
func (t *TextConfig) IsFull(i int) bool { return t.LayerTypes[i] == "full_attention" }

// FirstShared is the first KV-shared layer (NumHiddenLayers when none).
func (t *TextConfig) FirstShared() int { return t.NumHiddenLayers - t.NumKVSharedLayers }

// KVDonor returns the layer whose K/V layer i uses: itself, or for a
// KV-shared layer the last non-shared layer of the same type.
func (t *TextConfig) KVDonor(i int) int {
	first := t.FirstShared()
	if i < first {
		return i
	}
	for j := first - 1; j >= 0; j-- {
		if t.LayerTypes[j] == t.LayerTypes[i] {
			return j
		}
	}
	return -1
}

// HeadDimOf and KVHeadsOf give layer i's attention geometry.
func (t *TextConfig) HeadDimOf(i int) int {
	if t.IsFull(i) {
		return t.GlobalHeadDim
	}
	return t.HeadDim
}

func (t *TextConfig) KVHeadsOf(i int) int {
	if t.IsFull(i) && t.AttentionKEqV && t.NumGlobalKeyValueHeads != nil {
		return *t.NumGlobalKeyValueHeads
	}
	return t.NumKeyValueHeads
}

// KEqV reports whether layer i takes V from the raw K projection.
func (t *TextConfig) KEqV(i int) bool { return t.AttentionKEqV && t.IsFull(i) }

// MLPWidth is layer i's MLP width (doubled on KV-shared layers of E2B).
func (t *TextConfig) MLPWidth(i int) int {
	if t.UseDoubleWideMLP && t.NumKVSharedLayers > 0 && i >= t.FirstShared() {
		return 2 * t.IntermediateSize
	}
	return t.IntermediateSize
}
