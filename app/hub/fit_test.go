package hub

import (
	"encoding/json"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
)

func catalogEntry(t testing.TB, name string) CatalogEntry {
	t.Helper()
	for _, c := range Catalog() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no catalog entry %q", name)
	return CatalogEntry{}
}

func catalogDescription(t testing.TB, name string) *gemma4.Description {
	t.Helper()
	c := catalogEntry(t, name)
	d, err := gemma4.DescribeRemote(c.config, c.DiskBytes)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEstimateFitsAndRefuses(t *testing.T) {
	d := catalogDescription(t, "Gemma-4 E4B")
	big := Budget{TotalRAM: 64 << 30, Usable: 48 << 30, Source: "test"}
	for _, backend := range []string{gemma4.BackendGo, gemma4.BackendMLX} {
		e := EstimateMemory(d, backend, 0, big)
		if !e.Fits || e.Context != DefaultContext || e.Backend != backend ||
			e.Total != e.TextWeights+e.TowerWeights+e.KVCache+e.Working+e.Slack+e.Overhead {
			t.Fatalf("%s: estimate %+v", backend, e)
		}
		if e.MaxContext != e.ModelContext {
			t.Fatalf("%s: 48 GiB should fit E4B's whole context; max %d", backend, e.MaxContext)
		}
	}
	small := Budget{TotalRAM: 8 << 30, Usable: 7_500_000_000, Source: "test"}
	e := EstimateMemory(d, gemma4.BackendMLX, 32768, small)
	if e.Fits {
		t.Fatalf("E4B at 32K in 7.5 GB should not fit: %s", e.Breakdown())
	}
	// MaxContext is the boundary: it fits, one step more does not.
	if e.MaxContext == 0 || e.with(e.MaxContext) > small.Usable || e.with(e.MaxContext+256) <= small.Usable {
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

// TestEstimateUsesTheEngineRuntime: the fit check sizes the KV cache with
// the element size and window the engine allocates per backend (float32
// on Go, the checkpoint's bf16 on MLX; window + 1024 slack slots).
func TestEstimateUsesTheEngineRuntime(t *testing.T) {
	d := catalogDescription(t, "Gemma-4 E4B")
	for backend, elem := range map[string]int{gemma4.BackendGo: 4, gemma4.BackendMLX: 2} {
		e := EstimateMemory(d, backend, 4096, Budget{Usable: 1 << 40})
		if want := d.Cfg.Text.KVBytes(4096, elem, gemma4.DefaultWindowSlack); e.KVCache != want {
			t.Errorf("%s: KV %d, engine allocates %d", backend, e.KVCache, want)
		}
	}
	goEst := EstimateMemory(d, gemma4.BackendGo, 4096, Budget{Usable: 1 << 40})
	mlxEst := EstimateMemory(d, gemma4.BackendMLX, 4096, Budget{Usable: 1 << 40})
	if goEst.TextWeights >= mlxEst.TextWeights {
		t.Errorf("the Go backend maps the per-layer embedding table; MLX loads it: %d vs %d", goEst.TextWeights, mlxEst.TextWeights)
	}
}

func TestEstimateMonotoneInContext(t *testing.T) {
	for _, c := range Catalog() {
		d := catalogDescription(t, c.Name)
		for _, backend := range []string{gemma4.BackendGo, gemma4.BackendMLX} {
			e := EstimateMemory(d, backend, 256, Budget{})
			prev := int64(0)
			for ctx := 256; ctx <= e.ModelContext; ctx += 256 * 7 {
				tot := e.with(ctx)
				if tot < prev || tot <= 0 {
					t.Fatalf("%s/%s: total %d at %d after %d", c.Name, backend, tot, ctx, prev)
				}
				prev = tot
			}
		}
	}
}

func TestDescribeRemoteRequiresFields(t *testing.T) {
	var cfg map[string]any
	json.Unmarshal(catalogEntry(t, "Gemma-4 E2B").config, &cfg)
	for _, key := range []string{"sliding_window", "layer_types", "num_kv_shared_layers", "global_head_dim"} {
		text := map[string]any{}
		for k, v := range cfg["text_config"].(map[string]any) {
			text[k] = v
		}
		delete(text, key)
		cfg["text_config"] = text
		b, _ := json.Marshal(cfg)
		if _, err := gemma4.DescribeRemote(b, 1); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("without %s: %v", key, err)
		}
	}
}

// TestFitDirSplitsTowers: a local folder's weights come from its headers,
// split into text and towers by the same naming layer the loader uses.
func TestFitDirSplitsTowers(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "models", "text-tiny")
	h := &Hub{Memory: func() (Budget, error) { return Budget{Usable: 1 << 40, Source: "test"}, nil }, Backend: gemma4.BackendGo}
	e, err := h.FitDir(dir, 1024)
	if err != nil {
		t.Fatal(err)
	}
	d, err := gemma4.DescribeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Weights.Exact || d.Weights.Vision == 0 || d.Weights.Audio == 0 || e.TowerWeights != d.Weights.Towers() {
		t.Fatalf("weights %+v, towers %d", d.Weights, e.TowerWeights)
	}
	if !e.Fits || e.Context != 1024 {
		t.Fatalf("%+v", e)
	}
	// A hostile index naming a shard outside the folder is refused.
	bad := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(bad, f), data, 0o644)
	}
	os.WriteFile(filepath.Join(bad, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"../../etc/x.safetensors"}}`), 0o644)
	if _, err := h.FitDir(bad, 1024); err == nil || !strings.Contains(err.Error(), "not a safetensors file in the model folder") {
		t.Fatalf("hostile index: %v", err)
	}
}

// TestFitMistypedPathStaysLocal: a target meant as a folder is refused
// without asking the Hub.
func TestFitMistypedPathStaysLocal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the Hub was asked for %s", r.URL.Path)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	h := &Hub{Dir: t.TempDir(), Endpoint: srv.URL, Client: srv.Client(),
		Memory: func() (Budget, error) { return Budget{Usable: 1 << 40}, nil }}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(t.TempDir())
	os.Mkdir("models", 0o755)
	for _, target := range []string{"./models/gemma-4-e2b", "models/gemma-4-e2b", "/no/such/model", "~/models/x", "a/b/c"} {
		_, _, err := h.Fit(t.Context(), target, 0)
		if err == nil || !strings.Contains(err.Error(), "no such folder") {
			t.Errorf("%s: %v", target, err)
		}
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
		if r := c.RAMNeeded(0); r <= c.DiskBytes/2 {
			t.Errorf("%s: RAM %d for %d bytes of weights", c.Name, r, c.DiskBytes)
		}
		t.Logf("%-16s %-40s disk %8s  RAM@8K %8s", c.Name, c.Repo, FormatBytes(c.DiskBytes), FormatBytes(c.RAMNeeded(0)))
	}
	if defaults != 1 {
		t.Fatalf("%d default models", defaults)
	}
	// Public listings show no 4-bit 12B (8-bit, mxfp4, nvfp4, bf16 only).
	if _, ok := CatalogEntryFor("mlx-community/gemma-4-12B-it-4bit"); ok {
		t.Fatal("the catalog lists a 12B 4-bit repo that is not published")
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

// TestRandomGeometriesNeverNaN: any geometry the parser accepts gives a
// finite, positive, self-consistent estimate on both backends.
func TestRandomGeometriesNeverNaN(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	accepted := 0
	for i := 0; i < 300; i++ {
		f := family{1 + r.Intn(8192), 1 + r.Intn(80), 1 + r.Intn(30000), 1 + r.Intn(64), 1 + r.Intn(16), r.Intn(4),
			1 + r.Intn(4096), r.Intn(40), r.Intn(300), 1 + r.Intn(8), 1 + r.Intn(1<<20), r.Intn(2) == 0, r.Intn(2) == 0,
			nil, nil, nil, []int{4, 8}[r.Intn(2)]}
		d, err := gemma4.DescribeRemote(catalogConfig(f), r.Int63n(1<<40))
		if err != nil {
			continue
		}
		accepted++
		for _, backend := range []string{gemma4.BackendGo, gemma4.BackendMLX} {
			e := EstimateMemory(d, backend, r.Intn(1<<21), Budget{Usable: r.Int63n(1 << 40)})
			if e.Total <= 0 || e.KVCache < 0 || e.Working <= 0 || e.MaxContext < 0 || e.MaxContext > e.ModelContext {
				t.Fatalf("%+v: %+v", f, e)
			}
		}
	}
	if accepted < 30 {
		t.Fatalf("only %d of 300 random geometries parsed", accepted)
	}
}

// TestCatalogMatchesPublished: each catalog entry's built-in config
// describes what its published config.json does (family, towers, KV bytes
// per token, context), and its size is the published full-size inventory's.
func TestCatalogMatchesPublished(t *testing.T) {
	published := filepath.Join("..", "..", "engine", "gemma4", "testdata", "published")
	for _, c := range Catalog() {
		raw, err := os.ReadFile(filepath.Join(published, strings.Replace(c.Repo, "/", "--", 1), "config.json"))
		if err != nil {
			t.Fatalf("%s: %v", c.Repo, err)
		}
		pub, err := gemma4.DescribeRemote(raw, c.DiskBytes)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := gemma4.DescribeRemote(c.config, c.DiskBytes)
		if err != nil {
			t.Fatal(err)
		}
		if ours.Family != pub.Family || ours.Vision() != pub.Vision() || ours.Audio() != pub.Audio() ||
			ours.Quantization() != pub.Quantization() || ours.ContextLength() != pub.ContextLength() ||
			ours.Cfg.Text.KVPerToken(2) != pub.Cfg.Text.KVPerToken(2) {
			t.Errorf("%s: catalog describes %s %s ctx %d kv/token %d; published %s %s ctx %d kv/token %d", c.Repo,
				ours.Family, ours.Quantization(), ours.ContextLength(), ours.Cfg.Text.KVPerToken(2),
				pub.Family, pub.Quantization(), pub.ContextLength(), pub.Cfg.Text.KVPerToken(2))
		}
		inv, err := synth.Inventory(raw, synth.Options{Bits: pub.Cfg.Quant.Bits, BF16: true})
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, ts := range inv {
			total += ts.Bytes()
		}
		if total != c.DiskBytes {
			t.Errorf("%s: catalog says %d bytes, the published shapes give %d", c.Repo, c.DiskBytes, total)
		}
	}
}
