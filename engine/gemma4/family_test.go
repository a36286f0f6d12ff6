package gemma4_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/safetensors"
)

// familyConfig derives a tiny config of each Gemma-4 family from the
// fixture's text_config by overriding fields.
func familyConfig(t *testing.T, over map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	text := doc["text_config"].(map[string]any)
	for k, v := range over {
		text[k] = v
	}
	delete(doc, "vision_config")
	delete(doc, "audio_config")
	out, _ := json.Marshal(doc)
	return out
}

var families = map[string]map[string]any{
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

// TestFamiliesCacheConsistency: for every family, dense and 4-bit, plain and
// fast kernels agree, and prefill n == prefill n-1 + decode 1 past the window.
func TestFamiliesCacheConsistency(t *testing.T) {
	seq := []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448, 774, 125, 305, 221, 13, 21}
	for name, over := range families {
		for _, bits := range []int{0, 4} {
			dir := t.TempDir()
			if err := synth.Write(dir, familyConfig(t, over), synth.Options{Bits: bits, Seed: 3, Scale: 0.2}); err != nil {
				t.Fatal(err)
			}
			plain, fast := gocpu.New(gocpu.Options{Plain: true}), gocpu.New(gocpu.Options{})
			mp, err := gemma4.Load(plain, dir)
			if err != nil {
				t.Fatalf("%s/%d-bit: %v", name, bits, err)
			}
			mf := must(gemma4.Load(fast, dir))
			if len(mp.Unknown) != 0 {
				t.Fatalf("%s: unknown tensors %v", name, mp.Unknown)
			}
			for _, n := range []int{6, 13, 20} {
				all := must(fast.Float32s(mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[:n]), LastOnly: true}, mf.Text.NewCaches())))
				ref := must(plain.Float32s(mp.Text.Forward(gemma4.Inputs{IDs: ids(plain, seq[:n]), LastOnly: true}, mp.Text.NewCaches())))
				checkClose(t, name+" fast vs plain", all, ref, 1e-4)
				cs := mf.Text.NewCaches()
				mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[:n-1])}, cs)
				step := must(fast.Float32s(mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[n-1:n])}, cs)))
				checkClose(t, name+" prefill n vs n-1 + decode", step, all, 1e-4)
			}
			mp.Close()
			mf.Close()
		}
	}
}

// TestUnknownTensorsReported: a tensor no config field asks for is listed.
func TestUnknownTensorsReported(t *testing.T) {
	dir := t.TempDir()
	if err := synth.Write(dir, familyConfig(t, families["31b"]), synth.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.safetensors")
	m, err := safetensors.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts []safetensors.Tensor
	for _, n := range m.Names() {
		ti := m.Tensors[n]
		ts = append(ts, safetensors.Tensor{Name: n, DType: ti.DType, Shape: ti.Shape, Data: append([]byte(nil), m.Bytes(ti)...)})
	}
	m.Close()
	ts = append(ts, safetensors.Tensor{Name: "language_model.model.layers.0.mystery.weight", DType: "F32", Shape: []int{1}, Data: make([]byte, 4)})
	if err := safetensors.Write(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	model, err := gemma4.Load(gocpu.New(gocpu.Options{}), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if len(model.Unknown) != 1 || model.Unknown[0] != "language_model.model.layers.0.mystery.weight" {
		t.Fatalf("unknown tensors %v", model.Unknown)
	}
}

// TestSynthTowers: a synthetic checkpoint of the fixture's full config
// (text, vision and audio) loads with every tensor used.
func TestSynthTowers(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Write(dir, raw, synth.Options{Bits: 4, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := gemma4.Load(gocpu.New(gocpu.Options{}), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Vision == nil || m.Audio == nil || len(m.Unknown) != 0 {
		t.Fatalf("vision %v, audio %v, unknown %v", m.Vision != nil, m.Audio != nil, m.Unknown)
	}
}
