package train

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/lora"
)

// hfSnapshot lays the tiny model out as the Hugging Face cache does: every
// file of snapshots/<rev>/ is a symlink into blobs/.
func hfSnapshot(t *testing.T, model string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "models--perch--tiny")
	snap := filepath.Join(root, "snapshots", "0123abc")
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(root, "blobs"), 0o755)
	ents, err := os.ReadDir(model)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ents {
		data, err := os.ReadFile(filepath.Join(model, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(root, "blobs", "blob"+string(rune('a'+i)))
		os.WriteFile(blob, data, 0o644)
		if err := os.Symlink(filepath.Join("..", "..", "blobs", filepath.Base(blob)), filepath.Join(snap, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

func fuse(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runTrain(append([]string{"fuse", "--backend", "go"}, args...), &out, &errOut)
	return code, out.String() + errOut.String()
}

// TestFuseFromHFCache: fusing into a model whose files are symlinks (the
// Hugging Face cache's layout) writes every file the model needs; the
// fused model loads and answers as the adapter on the base model does; two
// fuses give the same bytes; an output inside the base folder is refused.
func TestFuseFromHFCache(t *testing.T) {
	snap := hfSnapshot(t, tinyModel)
	var outs []string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "fused")
		if code, msg := fuse(t, "--model", snap, "--adapter", loraTiny, "--out", out); code != 0 {
			t.Fatalf("fuse %d: exit %d: %s", i, code, msg)
		}
		outs = append(outs, out)
	}
	ents, _ := os.ReadDir(tinyModel)
	for _, e := range ents {
		a, err := os.ReadFile(filepath.Join(outs[0], e.Name()))
		if err != nil {
			t.Fatalf("the fused folder lacks %s: %v", e.Name(), err)
		}
		b, _ := os.ReadFile(filepath.Join(outs[1], e.Name()))
		if !bytes.Equal(a, b) {
			t.Errorf("two fuses of one adapter differ in %s", e.Name())
		}
		if st, _ := os.Lstat(filepath.Join(outs[0], e.Name())); !st.Mode().IsRegular() {
			t.Errorf("%s in the fused folder is %v, not a file", e.Name(), st.Mode())
		}
	}
	fused := askModelIDs(t, outs[0], "")
	adapted := askIDs(t, loraTiny)
	if len(fused) == 0 || !slices.Equal(fused, adapted) {
		t.Errorf("the fused model answers %v, the adapter on the base model %v", fused, adapted)
	}
	if code, msg := fuse(t, "--model", snap, "--adapter", loraTiny, "--out", filepath.Join(snap, "fused")); code == 0 || !strings.Contains(msg, "inside the base model's folder") {
		t.Errorf("an output inside the base folder: exit %d: %s", code, msg)
	}
	t.Logf("fused from a symlinked snapshot: %d files, answer %v as the adapter's", len(ents), fused)
}

// askModelIDs is perch ask's greedy answer from model (with adapter).
func askModelIDs(t *testing.T, model, adapter string) []int32 {
	t.Helper()
	args := []string{"--model", model, "--backend", "go", "--temperature", "0", "--max-tokens", "8", "--ignore-eos", "--json"}
	if adapter != "" {
		args = append(args, "--adapter", adapter)
	}
	var out, errOut bytes.Buffer
	if code := runAsk(append(args, "Question 99: which bird?"), &out, &errOut); code != 0 {
		return nil
	}
	var done struct {
		TokenIDs []int32 `json:"token_ids"`
	}
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if bytes.Contains(l, []byte(`"type":"done"`)) {
			json.Unmarshal(l, &done)
		}
	}
	return done.TokenIDs
}

// TestFuseRefusesWhatAskRefuses: eight broken adapters that perch ask
// refuses are refused by fuse too, and no output folder is left.
func TestFuseRefusesWhatAskRefuses(t *testing.T) {
	good, err := lora.Load(loraTiny)
	if err != nil {
		t.Fatal(err)
	}
	leaf := "language_model.model.layers.2.mlp.up_proj"
	cases := map[string]func(a *lora.Adapter){
		"scale 1e30":                            func(a *lora.Adapter) { a.Config.LoRA.Scale = 1e30 },
		"scale 1e308":                           func(a *lora.Adapter) { a.Config.LoRA.Scale = 1e308 },
		"rank 8 in the config, 4 in the leaves": func(a *lora.Adapter) { a.Config.LoRA.Rank = 8 },
		"leaves for layer 999": func(a *lora.Adapter) {
			a.Leaves["language_model.model.layers.999.mlp.up_proj.lora_a"] = a.Leaves[leaf+".lora_a"]
		},
		"two leaves for one projection": func(a *lora.Adapter) {
			a.Leaves["model.language_model.layers.2.mlp.up_proj.lora_a"] = a.Leaves[leaf+".lora_a"]
		},
		"no lora_b":         func(a *lora.Adapter) { delete(a.Leaves, leaf+".lora_b") },
		"not a LoRA leaf":   func(a *lora.Adapter) { a.Leaves[leaf+".weight"] = a.Leaves[leaf+".lora_a"] },
		"a key of layer 99": func(a *lora.Adapter) { a.Config.LoRA.Keys = append(a.Config.LoRA.Keys, "layers.99.mlp.up_proj") },
	}
	for name, mutate := range cases {
		a := &lora.Adapter{Config: good.Config, Leaves: map[string]lora.Leaf{}}
		a.Config.LoRA.Keys = slices.Clone(good.Config.LoRA.Keys)
		for n, l := range good.Leaves {
			a.Leaves[n] = l
		}
		mutate(a)
		dir := t.TempDir()
		if err := a.Save(dir); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ids := askModelIDs(t, tinyModel, dir); ids != nil {
			t.Errorf("%s: perch ask answers with it (%v): not a case ask refuses", name, ids)
		}
		out := filepath.Join(t.TempDir(), "fused")
		code, msg := fuse(t, "--model", tinyModel, "--adapter", dir, "--out", out)
		if _, err := os.Stat(out); code == 0 || err == nil {
			t.Errorf("%s: fuse exit %d, output left: %v", name, code, err == nil)
		}
		t.Logf("%s: %s", name, strings.TrimSpace(msg))
	}
}

// TestFuseQuantizedReportsDrift: requantizing into the 4-bit model reports
// how far the probe's logits moved and whether the greedy answer held;
// --dequantize reports nothing to drift.
func TestFuseQuantizedReportsDrift(t *testing.T) {
	q4 := "../../../testdata/models/text-tiny-q4"
	out := filepath.Join(t.TempDir(), "fused")
	code, msg := fuse(t, "--model", q4, "--adapter", loraTiny, "--out", out)
	if code != 0 || !strings.Contains(msg, "requantized: on a probe prompt the logits moved by up to") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	t.Logf("%s", strings.TrimSpace(msg))
	code, msg = fuse(t, "--model", q4, "--adapter", loraTiny, "--out", filepath.Join(t.TempDir(), "dense"), "--dequantize")
	if code != 0 || strings.Contains(msg, "requantized") {
		t.Fatalf("--dequantize: exit %d: %s", code, msg)
	}
}
