package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const loraTinyDir = testdata + "/goldens/lora-tiny"

// copyAdapter copies the fixture's adapter into a fresh folder.
func copyAdapter(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"adapters.safetensors", "adapter_config.json"} {
		data, err := os.ReadFile(filepath.Join(loraTinyDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRequestAdapters: each request runs with its own adapter or none; the
// prefix cache never carries keys and values across adapters, and an
// adapter's answer is the same warm or cold.
func TestRequestAdapters(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			e := openTiny(t, "text-tiny", Options{Backend: backend})
			prompt := []int32{2, 485, 494, 539, 301, 688, 630, 971}
			req := func(adapter string, ids []int32) Request {
				return Request{PromptIDs: ids, MaxTokens: 6, IgnoreEOS: true, Sampling: Sampling{Temperature: f32(0)}, Adapter: adapter}
			}
			base, _ := run(t, e, req("", prompt))
			tuned, s := run(t, e, req(loraTinyDir, prompt))
			if s.PrefixReused != 0 {
				t.Errorf("the adapter's request reused %d tokens the base model cached", s.PrefixReused)
			}
			if slices.Equal(base, tuned) {
				t.Fatalf("the adapter did not change the answer: %v", base)
			}
			follow := append(append(slices.Clone(prompt), tuned...), 300, 301)
			warm, s := run(t, e, req(loraTinyDir, follow))
			if s.PrefixReused < len(prompt) {
				t.Errorf("the same adapter's follow-up reused only %d tokens", s.PrefixReused)
			}
			cold, _ := run(t, openTiny(t, "text-tiny", Options{Backend: backend, Adapter: loraTinyDir}), req("", follow))
			if !slices.Equal(warm, cold) {
				t.Errorf("warm %v, cold (Options.Adapter) %v", warm, cold)
			}
			again, s := run(t, e, req("", prompt))
			if s.PrefixReused != 0 || !slices.Equal(again, base) {
				t.Errorf("back to the base model: %v (reused %d), want %v", again, s.PrefixReused, base)
			}

			// A changed file is read again: a new identity, no stale cache.
			dir := copyAdapter(t)
			first, _ := run(t, e, req(dir, prompt))
			if !slices.Equal(first, tuned) {
				t.Errorf("a copy of the adapter answers %v, want %v", first, tuned)
			}
			os.WriteFile(filepath.Join(dir, "adapter_config.json"), []byte(strings.Replace(mustRead(t, filepath.Join(dir, "adapter_config.json")), `"scale": 2.0`, `"scale": 0.0`, 1)), 0o644)
			zero, s := run(t, e, req(dir, prompt))
			if s.PrefixReused != 0 || !slices.Equal(zero, base) {
				t.Errorf("scale 0 answers %v (reused %d), want the base model's %v", zero, s.PrefixReused, base)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBadAdapters: an adapter that is missing or does not fit is refused
// before anything is queued, with its folder named.
func TestBadAdapters(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	wrong := copyAdapter(t)
	os.WriteFile(filepath.Join(wrong, "adapter_config.json"), []byte(`{"fine_tune_type": "lora", "num_layers": 6, "lora_parameters": {"rank": 8, "scale": 2.0, "dropout": 0.0, "keys": ["self_attn.q_proj"]}}`), 0o644)
	for name, dir := range map[string]string{"missing": t.TempDir(), "wrong rank": wrong} {
		_, err := e.Generate(t.Context(), Request{PromptIDs: []int32{2, 3}, Adapter: dir})
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Open(testdata+"/models/text-tiny", Options{Backend: BackendGo, Adapter: wrong}); err == nil || !strings.Contains(err.Error(), wrong) {
		t.Errorf("Options.Adapter that does not fit: %v", err)
	}
}
