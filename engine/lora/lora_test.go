package lora_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gocpu"
	"perch/engine/golden"
	"perch/engine/lora"
	"perch/engine/mlx"
	"perch/engine/tensor"
)

const testdata = "../../testdata"

var fixtureDir = filepath.Join(testdata, "goldens", "lora-tiny")

func loadTiny(t *testing.T, b tensor.Backend) *gemma4.Model {
	t.Helper()
	m, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func goldenFile(t *testing.T) *golden.File {
	t.Helper()
	g, err := golden.Open(filepath.Join(fixtureDir, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestFixtureAdapter: mlx-lm's adapter of lora-tiny loads, matches the
// model's 76 targets (KV-shared layers without k/v), and the forward with
// it attached (and detached again) reproduces the golden logits.
func TestFixtureAdapter(t *testing.T) {
	ad, err := lora.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ad.Leaves) != 76 || ad.Params() != 21248 {
		t.Fatalf("%d leaves, %d params; the fixture has 76 and 21248", len(ad.Leaves), ad.Params())
	}
	for name, nb := range testBackends() {
		b := nb(t)
		t.Logf("%s:", name)
		m := loadTiny(t, b)
		ts, err := lora.Targets(m.Text, ad.Config)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 38 {
			t.Fatalf("%d targets, want 38", len(ts))
		}
		for _, tg := range ts {
			if tg.Layer >= 4 && (strings.HasSuffix(tg.Module, "k_proj") || strings.HasSuffix(tg.Module, "v_proj")) {
				t.Fatalf("KV-shared layer %d targets %s", tg.Layer, tg.Module)
			}
		}
		g := goldenFile(t)
		ids := must(g.I32("forward.input_ids"))
		in := gemma4.Inputs{IDs: b.FromInt32(ids, []int{1, len(ids)})}
		x, err := lora.Attach(b, m, ad)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, "forward.logits", must(b.Float32s(m.Text.Forward(in, nil))), must(g.F32("forward.logits")), 2e-4)
		x.Detach()
		if m.Text.Adapter != nil {
			t.Fatal("Detach left the adapter on")
		}
		compare(t, "forward.logits_base", must(b.Float32s(m.Text.Forward(in, nil))), must(g.F32("forward.logits_base")), 2e-4)
	}
}

// TestSaveLoad: Save writes mlx-lm's two files (and nothing else); Load
// reads back the same config and leaves; a second Save replaces them.
func TestSaveLoad(t *testing.T) {
	ad, err := lora.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		if err := ad.Save(dir); err != nil {
			t.Fatal(err)
		}
		back, err := lora.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.Config.LoRA.Rank != 4 || back.Config.LoRA.Scale != 2 || back.Config.NumLayers != 6 || len(back.Config.LoRA.Keys) != 7 {
			t.Fatalf("config %+v", back.Config)
		}
		for n, l := range ad.Leaves {
			bl, ok := back.Leaves[n]
			if !ok || len(bl.Data) != len(l.Data) {
				t.Fatalf("leaf %s missing or resized", n)
			}
			for i := range l.Data {
				if bl.Data[i] != l.Data[i] {
					t.Fatalf("leaf %s[%d] = %v, want %v", n, i, bl.Data[i], l.Data[i])
				}
			}
		}
		ad.Leaves[ad.Names()[0]].Data[0] += 1
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("adapter folder holds %d entries, want the 2 files", len(ents))
	}
}

// TestNew: mlx-lm's initialisation: A within ±1/sqrt(In), B zero, so the
// new adapter leaves the logits unchanged.
func TestNew(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	m := loadTiny(t, b)
	cfg := lora.DefaultConfig()
	ad, err := lora.New(cfg, m, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ad.Leaves) != 76 {
		t.Fatalf("%d leaves, want 76", len(ad.Leaves))
	}
	for n, l := range ad.Leaves {
		if strings.HasSuffix(n, ".lora_b") {
			for _, v := range l.Data {
				if v != 0 {
					t.Fatalf("%s is not zero", n)
				}
			}
			continue
		}
		bound := 1 / float32(l.Shape[0])
		var maxAbs float32
		for _, v := range l.Data {
			maxAbs = max(maxAbs, v*v)
		}
		if maxAbs > bound || maxAbs < bound/4 {
			t.Fatalf("%s: max |a|^2 %v for bound^2 %v", n, maxAbs, bound)
		}
	}
	ids := b.FromInt32([]int32{2, 5, 7, 9}, []int{1, 4})
	base := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids}, nil)))
	if _, err := lora.Attach(b, m, ad); err != nil {
		t.Fatal(err)
	}
	compare(t, "zero-B adapter", must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids}, nil))), base, 0)
}

// TestMismatch: adapters that do not fit the model or the config fail with
// a message naming the problem.
func TestMismatch(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	m := loadTiny(t, b)
	good, err := lora.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() *lora.Adapter {
		c := &lora.Adapter{Config: good.Config, Leaves: map[string]lora.Leaf{}}
		for n, l := range good.Leaves {
			c.Leaves[n] = l
		}
		return c
	}
	cases := map[string]func(a *lora.Adapter){
		"has no lora_b": func(a *lora.Adapter) {
			delete(a.Leaves, "language_model.model.layers.2.mlp.up_proj.lora_b")
		},
		"has shape": func(a *lora.Adapter) {
			a.Config.LoRA.Rank = 8
		},
		"adapts a projection": func(a *lora.Adapter) {
			a.Leaves["language_model.model.layers.4.self_attn.k_proj.lora_a"] = lora.Leaf{Shape: []int{64, 4}, Data: make([]float32, 256)}
		},
		"not a LoRA leaf": func(a *lora.Adapter) {
			a.Leaves["language_model.model.layers.0.mlp.up_proj.weight"] = lora.Leaf{Shape: []int{1, 1}, Data: []float32{0}}
		},
	}
	for want, mutate := range cases {
		a := clone()
		mutate(a)
		if _, err := lora.Bind(b, m.Text, a); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	// mlx-vlm's full module paths and another text prefix are accepted.
	a := clone()
	a.Config.LoRA.Keys = nil
	for i := 0; i < 6; i++ {
		for _, k := range lora.DefaultKeys {
			a.Config.LoRA.Keys = append(a.Config.LoRA.Keys, "language_model.model.layers."+string(rune('0'+i))+"."+k)
		}
	}
	a.Leaves = map[string]lora.Leaf{}
	for n, l := range good.Leaves {
		a.Leaves[strings.Replace(n, "language_model.model.", "model.language_model.", 1)] = l
	}
	if _, err := lora.Bind(b, m.Text, a); err != nil {
		t.Fatal(err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for want, doc := range map[string]string{
		"not a JSON object":     `[1]`,
		"no lora_parameters":    `{"num_layers": 2}`,
		"rank 0":                `{"lora_parameters": {"rank": 0, "scale": 1}}`,
		"fine_tune_type":        `{"fine_tune_type": "dora", "lora_parameters": {"rank": 4, "scale": 1}}`,
		"dropout":               `{"lora_parameters": {"rank": 4, "scale": 1, "dropout": 1}}`,
		"not a projection":      `{"lora_parameters": {"rank": 4, "scale": 1, "keys": ["self_attn.rotary"]}}`,
		"bad layer number":      `{"lora_parameters": {"rank": 4, "scale": 1, "keys": ["layers.99999999999999999999.mlp.up_proj"]}}`,
		"over the 1048576":      `{"x": "` + strings.Repeat("a", 1<<20) + `"}`,
		"lora_parameters: json": `{"lora_parameters": 3}`,
	} {
		if _, err := lora.ParseConfig([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	c, err := lora.ParseConfig([]byte(`{"lora_parameters": {"rank": 4, "scale": 1}, "learning_rate": 1e-5, "model": "m"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := c.MarshalJSON()
	if !strings.Contains(string(out), `"learning_rate": 1e-5`) || !strings.Contains(string(out), `"model": "m"`) {
		t.Fatalf("extra fields not kept: %s", out)
	}
}

// testBackends are the Go backend's two paths and MLX where libmlxc loads
// (bound to the test's thread).
func testBackends() map[string]func(t *testing.T) tensor.Backend {
	bs := map[string]func(t *testing.T) tensor.Backend{
		"go-plain": func(*testing.T) tensor.Backend { return gocpu.New(gocpu.Options{Plain: true}) },
		"go":       func(*testing.T) tensor.Backend { return gocpu.New(gocpu.Options{}) },
	}
	if mlx.Available() == nil {
		bs["mlx"] = func(t *testing.T) tensor.Backend {
			runtime.LockOSThread()
			b, err := mlx.New()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close(); runtime.UnlockOSThread() })
			return b
		}
	} else {
		fmt.Println("lora: libmlxc not found, the adapter forward golden runs on the Go backend only")
	}
	return bs
}

func compare(t *testing.T, what string, got, want []float32, atol float64) {
	t.Helper()
	d, err := golden.Compare(got, want)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d.Max > atol {
		t.Fatalf("%s: %v over %g", what, d, atol)
	}
	t.Logf("%s: %v", what, d)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
