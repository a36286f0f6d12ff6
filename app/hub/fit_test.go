package hub

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/safetensors"
)

func catalogConfig(t *testing.T, name string) []byte {
	for _, c := range Catalog() {
		if c.Name == name {
			return c.config
		}
	}
	t.Fatalf("no catalog entry %q", name)
	return nil
}

// The per-token KV figures for E4B are stated in research gemma4.md §8.3:
// 4 full donors × K+V × 2 heads × 512 × 2 B = 16 KiB/token (unbounded), and
// 20 sliding donors × 2 × 2 × 256 × 2 B = 40 KiB/token capped at 512 tokens.
func TestKVCacheMatchesResearchE4B(t *testing.T) {
	g, err := parseGeometry(catalogConfig(t, "Gemma-4 E4B"))
	if err != nil {
		t.Fatal(err)
	}
	full, sliding := g.kvSplit()
	if full != 16<<10 || sliding != 40<<10 {
		t.Fatalf("E4B KV per token: full %v, sliding %v; want 16 KiB and 40 KiB", full, sliding)
	}
	if got, want := g.kvBytes(8192), int64(8192*16<<10+512*40<<10); got != want {
		t.Fatalf("E4B KV at 8192: %d, want %d", got, want)
	}
	// Growth is in 256-token steps.
	if g.kvBytes(257) != g.kvBytes(512) {
		t.Fatal("KV cache should grow in 256-token steps")
	}
}

func TestEstimateFitsAndRefuses(t *testing.T) {
	cfg := catalogConfig(t, "Gemma-4 E4B")
	w := Weights{Text: 4_200_000_000, Towers: 900_000_000}
	big := Budget{TotalRAM: 64 << 30, Usable: 48 << 30, Source: "test"}
	e, err := EstimateMemory(cfg, w, 0, big)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Fits || e.Context != DefaultContext || e.Total != e.TextWeights+e.TowerWeights+e.KVCache+e.Working+e.Overhead {
		t.Fatalf("estimate %+v", e)
	}
	if e.MaxContext != e.ModelContext {
		t.Fatalf("48 GiB should fit E4B's whole context; max %d", e.MaxContext)
	}
	small := Budget{TotalRAM: 8 << 30, Usable: 7_000_000_000, Source: "test"}
	e, err = EstimateMemory(cfg, w, 32768, small)
	if err != nil {
		t.Fatal(err)
	}
	if e.Fits {
		t.Fatalf("E4B at 32K in 7 GB should not fit: %s", e.Breakdown())
	}
	// MaxContext is the boundary: it fits, one step more does not.
	g, _ := parseGeometry(cfg)
	if e.MaxContext == 0 || e.with(g, e.MaxContext) > small.Usable || e.with(g, e.MaxContext+256) <= small.Usable {
		t.Fatalf("MaxContext %d is not the boundary", e.MaxContext)
	}
	msg := (&FitError{Model: "E4B", Estimate: e}).Error()
	for _, want := range []string{"does not fit", "--context", "gemma-4-e2b"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	t.Logf("refusal: %s\n%s", msg, e.Breakdown())
}

func TestEstimateMonotoneInContext(t *testing.T) {
	for _, c := range Catalog() {
		g, err := parseGeometry(c.config)
		if err != nil {
			t.Fatal(err)
		}
		e := &Estimate{TextWeights: c.DiskBytes, Overhead: runtimeOverhead}
		prev := int64(0)
		for ctx := 256; ctx <= g.MaxContext; ctx += 256 * 7 {
			tot := e.with(g, ctx)
			if tot < prev || tot <= 0 {
				t.Fatalf("%s: total %d at %d after %d", c.Name, tot, ctx, prev)
			}
			prev = tot
		}
	}
}

func TestConfigRequiresFields(t *testing.T) {
	var cfg map[string]any
	json.Unmarshal(catalogConfig(t, "Gemma-4 E2B"), &cfg)
	for _, key := range []string{"sliding_window", "layer_types", "num_kv_shared_layers", "global_head_dim", "num_global_key_value_heads"} {
		text := map[string]any{}
		for k, v := range cfg["text_config"].(map[string]any) {
			text[k] = v
		}
		delete(text, key)
		b, _ := json.Marshal(map[string]any{"model_type": "gemma4", "text_config": text})
		_, err := EstimateMemory(b, Weights{}, 0, Budget{})
		if err == nil || !strings.Contains(err.Error(), "text_config."+key) {
			t.Errorf("without %s: %v", key, err)
		}
	}
	// A null num_global_key_value_heads is the Hub's spelling for "same as sliding".
	if _, err := EstimateMemory(catalogConfig(t, "Gemma-4 E2B"), Weights{}, 0, Budget{}); err != nil {
		t.Fatal(err)
	}
}

func TestFitDirSplitsTowers(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), tinyConfig(), 0o644)
	f32 := func(name string, n int) safetensors.Tensor {
		return safetensors.Tensor{Name: name, DType: "F32", Shape: []int{n}, Data: make([]byte, 4*n)}
	}
	err := safetensors.Write(filepath.Join(dir, "model.safetensors"), []safetensors.Tensor{
		f32("language_model.model.embed_tokens.weight", 1000),
		f32("vision_tower.encoder.layers.0.mlp.up_proj.linear.weight", 300),
		f32("audio_tower.output_proj.weight", 200),
		f32("embed_vision.embedding_projection.weight", 50),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &Hub{Memory: func() (Budget, error) { return Budget{Usable: 1 << 40, Source: "test"}, nil }}
	e, err := h.FitDir(dir, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if e.TextWeights != 4000 || e.TowerWeights != 4*550 {
		t.Fatalf("text %d, towers %d; want 4000 and 2200", e.TextWeights, e.TowerWeights)
	}
	if !e.Fits || e.Context != 1024 {
		t.Fatalf("%+v", e)
	}
	// A hostile index naming a shard outside the folder is refused.
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"../../etc/x.safetensors"}}`), 0o644)
	if _, err := h.FitDir(dir, 1024); !errors.Is(err, ErrUnsafeName) {
		t.Fatalf("hostile index: %v", err)
	}
}

func TestCatalogIsConsistent(t *testing.T) {
	defaults := 0
	prev := int64(0)
	for _, c := range Catalog() {
		if _, err := ParseRepo(c.Repo); err != nil {
			t.Errorf("%s: %v", c.Repo, err)
		}
		if c.Default {
			defaults++
		}
		if c.DiskBytes <= prev {
			t.Errorf("%s: catalog should be ordered by size", c.Name)
		}
		prev = c.DiskBytes
		info, err := DescribeConfig(c.config)
		if err != nil || info.Family != c.Name || info.Vision != c.Vision || info.Audio != c.Audio {
			t.Errorf("%s: config describes %+v (%v)", c.Name, info, err)
		}
		if r := c.RAMNeeded(0); r <= c.DiskBytes {
			t.Errorf("%s: RAM %d not above its weights", c.Name, r)
		}
		t.Logf("%-16s %-40s disk %8s  RAM@8K %8s", c.Name, c.Repo, FormatBytes(c.DiskBytes), FormatBytes(c.RAMNeeded(0)))
	}
	if defaults != 1 {
		t.Fatalf("%d default models", defaults)
	}
}

func TestSuggestSmaller(t *testing.T) {
	b := Budget{Usable: 8 << 30}
	s := SuggestSmaller(18_000_000_000, DefaultContext, b)
	if !strings.Contains(s, "gemma-4-e4b") {
		t.Fatalf("8 GiB, 31B refused: suggestion %q, want E4B", s)
	}
	if s := SuggestSmaller(18_000_000_000, DefaultContext, Budget{Usable: 1 << 30}); s != "" {
		t.Fatalf("nothing fits 1 GiB, got %q", s)
	}
}

func TestMachineBudget(t *testing.T) {
	b, err := MachineBudget()
	if err != nil {
		t.Skipf("machine memory unknown here: %v", err)
	}
	if b.TotalRAM <= 0 || b.Usable <= 0 || b.Usable > b.TotalRAM || b.Source == "" {
		t.Fatalf("budget %+v", b)
	}
	t.Logf("this machine: %s usable (%s)", FormatBytes(b.Usable), b.Source)
}

func TestRandomConfigsNeverNaN(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 200; i++ {
		layers := 1 + r.Intn(80)
		types := make([]string, layers)
		for j := range types {
			types[j] = []string{"sliding_attention", "full_attention"}[r.Intn(2)]
		}
		text := map[string]any{
			"hidden_size": 1 + r.Intn(8192), "intermediate_size": 1 + r.Intn(30000), "num_hidden_layers": layers,
			"num_attention_heads": 1 + r.Intn(64), "num_key_value_heads": 1 + r.Intn(16), "num_global_key_value_heads": nil,
			"head_dim": 1 + r.Intn(512), "global_head_dim": 1 + r.Intn(512), "layer_types": types,
			"sliding_window": 1 + r.Intn(4096), "num_kv_shared_layers": r.Intn(layers), "hidden_size_per_layer_input": nil,
			"vocab_size": 1 + r.Intn(300000), "max_position_embeddings": 1 + r.Intn(1<<20),
		}
		b, _ := json.Marshal(map[string]any{"text_config": text})
		e, err := EstimateMemory(b, Weights{Text: r.Int63n(1 << 40)}, r.Intn(1<<21), Budget{Usable: r.Int63n(1 << 40)})
		if err != nil {
			t.Fatal(err)
		}
		if e.Total <= 0 || e.KVCache < 0 || e.Working <= 0 || e.MaxContext < 0 || e.MaxContext > e.ModelContext {
			t.Fatalf("config %s: %+v", b, e)
		}
	}
}
