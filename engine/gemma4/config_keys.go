package gemma4

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// Every key a published Gemma-4 config.json carries is either read by the
// structs in config*.go (their json tags), read by hand (rawKeys), or listed
// here as knowingly ignored with the reason. unrecognizedKeys reports the
// rest, so a checkpoint from a newer converter says what Perch skipped.

// baseIgnored are the keys transformers writes into every (sub)config.
var baseIgnored = map[string]string{
	"_name_or_path":           "provenance",
	"architectures":           "the model_type and the towers say the same",
	"chunk_size_feed_forward": "training option",
	"dtype":                   "every tensor carries its own dtype",
	"torch_dtype":             "older spelling of dtype",
	"id2label":                "classification heads only",
	"label2id":                "classification heads only",
	"initializer_range":       "training only",
	"is_encoder_decoder":      "always false for Gemma-4",
	"output_attentions":       "transformers output option",
	"output_hidden_states":    "transformers output option",
	"problem_type":            "classification heads only",
	"return_dict":             "transformers output option",
	"transformers_version":    "provenance",
	"use_cache":               "the engine always caches",
	"attention_dropout":       "training only (0 in every release)",
}

// ignoredKeys are section-specific keys read by nothing, and why.
var ignoredKeys = map[string]map[string]string{
	"text_config": {
		"bos_token_id":           "the chat template writes <bos>",
		"sliding_window_pattern": "layer_types is authoritative",
	},
	"vision_config": {
		"global_head_dim":         "the vision tower has one head size (head_dim)",
		"hidden_activation":       "always gelu_pytorch_tanh in the vision tower",
		"max_position_embeddings": "positions come from the patch grid (position_embedding_size)",
		"attention_bias":          "false in every release; the tower has no bias tensors",
	},
}

// rawKeys are keys a parser reads from the raw map rather than a struct tag.
var rawKeys = map[string][]string{
	"config":      {"eos_token_id", "quantization", "quantization_config", "text_config", "vision_config", "audio_config", "tie_word_embeddings", "eoa_token_index"},
	"text_config": {"eos_token_id"},
}

// readKeys is the union of the json tags of the structs that parse a
// section, plus its raw keys.
func readKeys(section string, types ...any) map[string]bool {
	out := map[string]bool{}
	for _, v := range types {
		t := reflect.TypeOf(v)
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out[name] = true
			}
		}
	}
	for _, k := range rawKeys[section] {
		out[k] = true
	}
	return out
}

var sectionReaders = map[string]map[string]bool{
	"config":        readKeys("config", Config{}),
	"text_config":   readKeys("text_config", TextConfig{}),
	"vision_config": readKeys("vision_config", VisionConfig{}),
	"audio_config":  readKeys("audio_config", AudioConfig{}),
}

// known reports whether section's key is read or knowingly ignored.
func known(section, key string) bool {
	if sectionReaders[section][key] {
		return true
	}
	if _, ok := baseIgnored[key]; ok {
		return true
	}
	_, ok := ignoredKeys[section][key]
	return ok
}

// unrecognizedKeys lists the keys of top, text_config and the tower
// configs that nothing reads or knowingly ignores, as "section.key".
func unrecognizedKeys(top, text map[string]json.RawMessage, nested bool) []string {
	var out []string
	check := func(section string, m map[string]json.RawMessage, also ...string) {
		for k := range m {
			ok := known(section, k)
			for _, s := range also {
				ok = ok || known(s, k)
			}
			if !ok {
				out = append(out, section+"."+k)
			}
		}
	}
	if nested {
		check("config", top)
		check("text_config", text)
	} else {
		check("config", top, "text_config") // flat text-only: one object for both
	}
	for _, section := range []string{"vision_config", "audio_config"} {
		var m map[string]json.RawMessage
		if json.Unmarshal(top[section], &m) == nil {
			check(section, m)
		}
	}
	sort.Strings(out)
	return out
}
