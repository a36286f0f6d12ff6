package synth

import (
	"encoding/json"
	"fmt"
	"perch/engine/gemma4"
)

// Families are the text_config overrides that turn a tiny E2B-style config
// into a tiny config of each other Gemma-4 family.
var Families = map[string]map[string]any{
	// E4B: per-layer inputs and KV sharing, no double-wide MLP.
	"e4b": {"use_double_wide_mlp": false},
	// 12B-style unified text: K-eq-V full layers, no PLE, no sharing.
	"12b": {"attention_k_eq_v": true, "num_global_key_value_heads": 1, "num_key_value_heads": 2,
		"hidden_size_per_layer_input": 0, "num_kv_shared_layers": 0, "use_double_wide_mlp": false},
	// 26B-A4B: MoE (dense branch + routed experts), K-eq-V.
	"26b-moe": {"enable_moe_block": true, "num_experts": 4, "top_k_experts": 2, "moe_intermediate_size": 64,
		"attention_k_eq_v": true, "num_global_key_value_heads": 1, "hidden_size_per_layer_input": 0,
		"num_kv_shared_layers": 0, "use_double_wide_mlp": false},
	// 31B: dense, K-eq-V with 2 global KV heads.
	"31b": {"attention_k_eq_v": true, "num_global_key_value_heads": 2, "num_key_value_heads": 2,
		"num_attention_heads": 4, "hidden_size_per_layer_input": 0, "num_kv_shared_layers": 0, "use_double_wide_mlp": false},
}

// FamilyConfig is base (a config.json with a nested text_config) with the
// text overrides of Families[name] and without vision and audio towers.
func FamilyConfig(base []byte, name string) ([]byte, error) {
	over, ok := Families[name]
	if !ok {
		return nil, fmt.Errorf("synth: no family %q", name)
	}
	var doc map[string]any
	if err := json.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("synth: base config: %w", err)
	}
	text, ok := doc["text_config"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("synth: base config has no text_config")
	}
	for k, v := range over {
		text[k] = v
	}
	delete(doc, "vision_config")
	delete(doc, "audio_config")
	return json.Marshal(doc)
}

// Shrink turns a published config.json into a small config of the same
// family, keeping every structural feature (layer pattern, KV sharing,
// double-wide MLP, per-layer inputs, K-eq-V, MoE, towers) and the key set:
// the layers Cut keeps at widths small enough for a unit test, chosen so
// that 64-wide quantization groups still apply to most linears.
func Shrink(config []byte, layers int) ([]byte, error) {
	return edit(config, layers, true)
}

// Cut is config with only its first `layers` layers (the last one full
// attention, KV sharing scaled to the same share of layers where each
// shared layer keeps an earlier donor of its kind) and every width as
// published: the published tensor shapes at a fraction of the depth.
func Cut(config []byte, layers int) ([]byte, error) {
	return edit(config, layers, false)
}

func edit(config []byte, layers int, small bool) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(config, &doc); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	text, ok := doc["text_config"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("synth: config has no text_config")
	}
	types, _ := text["layer_types"].([]any)
	origNL, _ := text["num_hidden_layers"].(float64)
	if layers <= 1 || layers > len(types) || origNL <= 0 {
		return nil, fmt.Errorf("synth: cannot shrink %d layers to %d", len(types), layers)
	}
	lt := append([]any(nil), types[:layers]...)
	lt[layers-1] = "full_attention"
	text["layer_types"], text["num_hidden_layers"] = lt, layers
	if small {
		narrow(doc, text, layers)
	}
	if shared, _ := text["num_kv_shared_layers"].(float64); shared > 0 {
		n := max(1, int(float64(layers)*shared/origNL+0.5))
		for n > 0 && !(hasType(lt[:layers-n], "full_attention") && hasType(lt[:layers-n], "sliding_attention")) {
			n-- // every shared layer needs an earlier donor of its kind
		}
		text["num_kv_shared_layers"] = n
	}
	out, err := json.Marshal(doc) // quantization overrides stay: synth.Write applies or drops them
	if err != nil {
		return nil, err
	}
	if _, err := gemma4.ParseConfig(out); err != nil {
		return nil, fmt.Errorf("synth: edited config: %w", err)
	}
	return out, nil
}

// narrow sets the small widths of Shrink.
func narrow(doc, text map[string]any, layers int) {
	set := func(m map[string]any, kv ...any) {
		for i := 0; i < len(kv); i += 2 {
			if _, present := m[kv[i].(string)]; present {
				m[kv[i].(string)] = kv[i+1]
			}
		}
	}
	kv := 2
	if n, _ := text["num_key_value_heads"].(float64); n == 1 {
		kv = 1
	}
	set(text, "hidden_size", 64, "intermediate_size", 128, "num_attention_heads", 4, "num_key_value_heads", kv,
		"head_dim", 16, "global_head_dim", 32, "vocab_size", 512, "sliding_window", 8)
	if g, ok := text["num_global_key_value_heads"].(float64); ok {
		text["num_global_key_value_heads"] = min(int(g), 2)
	}
	if p, _ := text["hidden_size_per_layer_input"].(float64); p > 0 {
		ple := 8
		for layers*ple%64 != 0 {
			ple += 8
		}
		text["hidden_size_per_layer_input"], text["vocab_size_per_layer_input"] = ple, 512
	}
	if moe, _ := text["enable_moe_block"].(bool); moe {
		text["num_experts"], text["top_k_experts"], text["moe_intermediate_size"] = 4, 2, 64
	}
	if v, ok := doc["vision_config"].(map[string]any); ok {
		set(v, "hidden_size", 64, "num_hidden_layers", 2, "num_attention_heads", 4, "num_key_value_heads", 4,
			"head_dim", 16, "global_head_dim", 16, "intermediate_size", 128, "position_embedding_size", 64,
			"mm_embed_dim", 64, "mm_posemb_size", 16, "output_proj_dims", 64)
	}
	if a, ok := doc["audio_config"].(map[string]any); ok && a["model_type"] == gemma4.AudioConformer {
		set(a, "hidden_size", 32, "num_hidden_layers", 1, "num_attention_heads", 2,
			"subsampling_conv_channels", []int{4, 8}, "conv_kernel_size", 3, "output_proj_dims", 64)
	}
}

func hasType(types []any, kind string) bool {
	for _, t := range types {
		if t == kind {
			return true
		}
	}
	return false
}
