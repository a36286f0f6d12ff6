package gemma4_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/gemma4"
)

func fixtureConfig(t testing.TB) []byte {
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestConfigRequiresEveryField(t *testing.T) {
	base := fixtureConfig(t)
	if _, err := gemma4.ParseConfig(base); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"hidden_size", "layer_types", "rope_parameters", "use_double_wide_mlp", "num_kv_shared_layers", "attention_k_eq_v"} {
		var doc map[string]any
		json.Unmarshal(base, &doc)
		delete(doc["text_config"].(map[string]any), key)
		b, _ := json.Marshal(doc)
		_, err := gemma4.ParseConfig(b)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("without %s: %v", key, err)
		}
	}
}

func TestConfigFlatTextOnly(t *testing.T) {
	var doc map[string]any
	json.Unmarshal(fixtureConfig(t), &doc)
	text := doc["text_config"].(map[string]any)
	text["eos_token_id"] = []int{1, 106}
	b, _ := json.Marshal(text)
	c, err := gemma4.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Text.HiddenSize != 64 || len(c.EOSTokenIDs) != 2 || c.Text.NumKVSharedLayers != 2 {
		t.Fatalf("flat config parsed as %+v", c.Text)
	}
}

func TestConfigRejects(t *testing.T) {
	base := fixtureConfig(t)
	cases := map[string]func(text map[string]any, doc map[string]any){
		"layer_types": func(x, _ map[string]any) { x["layer_types"] = []string{"sliding_attention"} },
		"rope_type": func(x, _ map[string]any) {
			x["rope_parameters"].(map[string]any)["full_attention"].(map[string]any)["rope_type"] = "yarn"
		},
		"hidden_activation": func(x, _ map[string]any) { x["hidden_activation"] = "relu" },
		"bits":              func(_, d map[string]any) { d["quantization"] = map[string]any{"bits": 3, "group_size": 64} },
		"mode": func(_, d map[string]any) {
			d["quantization"] = map[string]any{"bits": 4, "group_size": 64, "mode": "mxfp4"}
		},
		"hidden_size": func(x, _ map[string]any) { x["hidden_size"] = -4 },
	}
	for name, mutate := range cases {
		var doc map[string]any
		json.Unmarshal(base, &doc)
		mutate(doc["text_config"].(map[string]any), doc)
		b, _ := json.Marshal(doc)
		if _, err := gemma4.ParseConfig(b); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, junk := range []string{"", "[]", "{", `{"text_config": 5}`, strings.Repeat(" ", 5<<20)} {
		if _, err := gemma4.ParseConfig([]byte(junk)); err == nil {
			t.Errorf("accepted %.20q", junk)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(fixtureConfig(f))
	f.Add([]byte(`{"model_type":"gemma4","text_config":{}}`))
	f.Add([]byte(`{"eos_token_id":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := gemma4.ParseConfig(b)
		if err != nil {
			return
		}
		// An accepted config must be internally consistent.
		tc := &c.Text
		if len(tc.LayerTypes) != tc.NumHiddenLayers || tc.HiddenSize <= 0 {
			t.Fatalf("accepted inconsistent config %+v", tc)
		}
		for i := range tc.LayerTypes {
			if d := tc.KVDonor(i); d < 0 || d > i {
				t.Fatalf("layer %d has donor %d", i, d)
			}
			_ = tc.MLPWidth(i)
		}
	})
}
