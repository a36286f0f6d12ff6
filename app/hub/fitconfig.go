package hub

import (
	"encoding/json"
	"fmt"
	"strings"
)

// geometry is what the memory estimate reads from config.json. Every
// text field is required (gemma4.md §1.4: library defaults are wrong for
// real checkpoints); only fields the Hub config spells as null may be null.
type geometry struct {
	Hidden, Intermediate, Layers, Heads int
	KVHeads, GlobalKVHeads              int
	HeadDim, GlobalHeadDim              int
	Full                                []bool // per layer: full attention (else sliding)
	Window, SharedKV                    int
	Vocab, MaxContext                   int
	PerLayerInput                       int // PLE width, 0 without PLE
	DoubleWideMLP                       bool
	ActBytes                            int    // bytes per activation / KV element
	ActNote                             string // set when the dtype was assumed

	Vision *towerGeometry
	Audio  *towerGeometry
}

type towerGeometry struct {
	Hidden, Intermediate, Heads int
	Tokens                      int // tokens it encodes at the default budget
}

// Bounds that keep the arithmetic meaningful; real Gemma-4 values are far inside.
const (
	maxDim     = 1 << 16
	maxLayers  = 1024
	maxHeads   = 1024
	maxContext = 1 << 24
	maxVocab   = 1 << 22
)

func parseGeometry(data []byte) (*geometry, error) {
	if len(data) > 16<<20 {
		return nil, fmt.Errorf("config.json: %d bytes, too large", len(data))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("config.json: %v", err)
	}
	text := top
	prefix := ""
	if raw, ok := top["text_config"]; ok && isObject(raw) {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fmt.Errorf("config.json: text_config: %v", err)
		}
		prefix = "text_config."
	}
	r := fieldReader{m: text, prefix: prefix}
	g := &geometry{
		Hidden:        r.int("hidden_size", 1, maxDim),
		Intermediate:  r.int("intermediate_size", 1, maxDim*4),
		Layers:        r.int("num_hidden_layers", 1, maxLayers),
		Heads:         r.int("num_attention_heads", 1, maxHeads),
		KVHeads:       r.int("num_key_value_heads", 1, maxHeads),
		HeadDim:       r.int("head_dim", 1, maxDim),
		GlobalHeadDim: r.int("global_head_dim", 1, maxDim),
		Window:        r.int("sliding_window", 1, maxContext),
		SharedKV:      r.int("num_kv_shared_layers", 0, maxLayers),
		Vocab:         r.int("vocab_size", 1, maxVocab),
		MaxContext:    r.int("max_position_embeddings", 1, maxContext),
	}
	g.GlobalKVHeads = r.nullableInt("num_global_key_value_heads", g.KVHeads, 1, maxHeads)
	g.PerLayerInput = r.nullableInt("hidden_size_per_layer_input", 0, 0, maxDim)
	g.DoubleWideMLP = r.optBool("use_double_wide_mlp")
	var types []string
	r.decode("layer_types", &types)
	if r.err == nil && len(types) != g.Layers {
		r.fail("layer_types has %d entries for %d layers", len(types), g.Layers)
	}
	for _, t := range types {
		switch t {
		case "full_attention":
			g.Full = append(g.Full, true)
		case "sliding_attention":
			g.Full = append(g.Full, false)
		default:
			r.fail("layer_types: unknown type %q", truncate(t, 40))
		}
	}
	if r.err == nil && g.SharedKV >= g.Layers {
		r.fail("num_kv_shared_layers %d leaves no layer with its own cache", g.SharedKV)
	}
	if r.err != nil {
		return nil, r.err
	}
	g.ActBytes, g.ActNote = activationBytes(text, top)

	if raw, ok := top["vision_config"]; ok && isObject(raw) {
		g.Vision = towerFrom(raw, visionTokens(top, raw))
	}
	if raw, ok := top["audio_config"]; ok && isObject(raw) {
		g.Audio = towerFrom(raw, 750) // 30 s at 25 tokens/s, the per-clip cap
	}
	return g, nil
}

// visionTokens is the patch count one image at the default budget feeds
// the tower: soft tokens × pooling² (gemma4.md §4).
func visionTokens(top map[string]json.RawMessage, vision json.RawMessage) int {
	soft, pool := 280, 3
	var n int
	if raw, ok := top["vision_soft_tokens_per_image"]; ok && json.Unmarshal(raw, &n) == nil && n > 0 && n <= 4096 {
		soft = n
	}
	var v struct {
		Pool int `json:"pooling_kernel_size"`
	}
	if json.Unmarshal(vision, &v) == nil && v.Pool > 0 && v.Pool <= 16 {
		pool = v.Pool
	}
	return soft * pool * pool
}

func towerFrom(raw json.RawMessage, tokens int) *towerGeometry {
	var t struct {
		Hidden       int `json:"hidden_size"`
		Intermediate int `json:"intermediate_size"`
		Heads        int `json:"num_attention_heads"`
		Embed        int `json:"mm_embed_dim"` // encoder-free (12B)
	}
	json.Unmarshal(raw, &t)
	clamp := func(v, lo, hi int) int { return max(lo, min(v, hi)) }
	if t.Hidden <= 0 {
		t.Hidden = t.Embed
	}
	switch {
	case t.Heads <= 0: // encoder-free embedder (12B): one projection, no attention
		t.Intermediate, t.Heads = t.Hidden, 0
	case t.Intermediate <= 0: // the conformer's feed-forward is 4× wide
		t.Intermediate = 4 * t.Hidden
	}
	return &towerGeometry{
		Hidden:       clamp(t.Hidden, 1, maxDim),
		Intermediate: clamp(t.Intermediate, 1, maxDim*4),
		Heads:        clamp(t.Heads, 0, maxHeads),
		Tokens:       tokens,
	}
}

// activationBytes reads the compute dtype; MLX runs quantized checkpoints
// in their scales' dtype, which mlx-community configs record as bfloat16.
func activationBytes(text, top map[string]json.RawMessage) (int, string) {
	for _, m := range []map[string]json.RawMessage{text, top} {
		for _, k := range []string{"dtype", "torch_dtype"} {
			var s string
			if json.Unmarshal(m[k], &s) != nil {
				continue
			}
			switch strings.ToLower(s) {
			case "float32":
				return 4, ""
			case "bfloat16", "float16":
				return 2, ""
			}
		}
	}
	return 2, "dtype not in config.json; assumed bfloat16"
}

// fieldReader reads required fields, keeping the first error.
type fieldReader struct {
	m      map[string]json.RawMessage
	prefix string
	err    error
}

func (r *fieldReader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("config.json: "+format, a...)
	}
}

func (r *fieldReader) decode(key string, dst any) bool {
	raw, ok := r.m[key]
	if !ok || string(raw) == "null" {
		r.fail("%s%s is missing; this does not look like a Gemma-4 config", r.prefix, key)
		return false
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		r.fail("%s%s: %v", r.prefix, key, err)
		return false
	}
	return true
}

func (r *fieldReader) int(key string, lo, hi int) int {
	var v int
	if r.decode(key, &v) && (v < lo || v > hi) {
		r.fail("%s%s = %d, outside [%d, %d]", r.prefix, key, v, lo, hi)
	}
	return v
}

// nullableInt reads a key that must be present but may be null (then def).
func (r *fieldReader) nullableInt(key string, def, lo, hi int) int {
	raw, ok := r.m[key]
	if !ok {
		r.fail("%s%s is missing; this does not look like a Gemma-4 config", r.prefix, key)
		return def
	}
	if string(raw) == "null" {
		return def
	}
	return r.int(key, lo, hi)
}

func (r *fieldReader) optBool(key string) bool {
	var b bool
	json.Unmarshal(r.m[key], &b)
	return b
}
