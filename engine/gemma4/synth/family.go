package synth

import (
	"encoding/json"
	"fmt"
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
