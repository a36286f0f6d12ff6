package engine

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/safetensors"
)

// copyModel copies a tiny model folder so a test can damage it.
func copyModel(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(testdata, "models", name)
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func edit(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenBrokenModels: each damaged model folder gives a clear error that
// names the file (and tensor or field), never a panic or a huge allocation.
func TestOpenBrokenModels(t *testing.T) {
	weights := "model.safetensors"
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string
	}{
		{"truncated safetensors", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, weights), func(b []byte) []byte { return b[:len(b)/2] })
		}, []string{weights, "outside"}},
		{"header claims 100 GB", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, weights), func(b []byte) []byte {
				binary.LittleEndian.PutUint64(b, 100<<30)
				return b
			})
		}, []string{weights, "over the"}},
		{"overlapping offsets", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, weights), func(b []byte) []byte {
				n := binary.LittleEndian.Uint64(b)
				var hdr map[string]any
				json.Unmarshal(b[8:8+n], &hdr)
				var c string // a tensor not at offset 0, moved onto the first one
				for k, v := range hdr {
					if k == "__metadata__" {
						continue
					}
					if off := v.(map[string]any)["data_offsets"].([]any); c == "" && off[0].(float64) > 0 && off[1].(float64)-off[0].(float64) >= 8 {
						c = k
					}
				}
				off := hdr[c].(map[string]any)["data_offsets"].([]any)
				size := off[1].(float64) - off[0].(float64)
				hdr[c].(map[string]any)["data_offsets"] = []float64{0, size}
				nh, _ := json.Marshal(hdr)
				for len(nh) < int(n) {
					nh = append(nh, ' ')
				}
				if len(nh) > int(n) {
					t.Skip("re-encoded header grew; cannot keep the data in place")
				}
				out := append([]byte(nil), b...)
				copy(out[8:], nh)
				return out
			})
		}, []string{weights, "overlap"}},
		{"config missing a field", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "config.json"), func(b []byte) []byte {
				var doc map[string]any
				json.Unmarshal(b, &doc)
				delete(doc["text_config"].(map[string]any), "sliding_window")
				out, _ := json.Marshal(doc)
				return out
			})
		}, []string{"config.json", "sliding_window"}},
		{"tokenizer.json not JSON", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "tokenizer.json"), func([]byte) []byte { return []byte("<html>not json</html>") })
		}, []string{"tokenizer.json"}},
		{"missing tensor", func(t *testing.T, dir string) {
			path := filepath.Join(dir, weights)
			m, err := safetensors.Map(path)
			if err != nil {
				t.Fatal(err)
			}
			var keep []safetensors.Tensor
			for _, name := range m.Names() {
				if name == "language_model.model.layers.3.mlp.up_proj.weight" {
					continue
				}
				ti := m.Tensors[name]
				keep = append(keep, safetensors.Tensor{Name: name, DType: ti.DType, Shape: ti.Shape, Data: append([]byte(nil), m.Bytes(ti)...)})
			}
			m.Close()
			if err := safetensors.Write(path, keep, nil); err != nil {
				t.Fatal(err)
			}
		}, []string{"layers.3.mlp.up_proj.weight", "missing"}},
		{"no weights at all", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, weights))
			os.Remove(filepath.Join(dir, "model.safetensors.index.json"))
		}, []string{"model.safetensors"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyModel(t, "text-tiny")
			c.damage(t, dir)
			_, err := Open(dir, Options{Backend: BackendGo})
			if err == nil {
				t.Fatal("opened a broken model")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestShardedCheckpoint: weights split over two shards named by the index
// load and give the same greedy ids.
func TestShardedCheckpoint(t *testing.T) {
	dir := copyModel(t, "text-tiny")
	m, err := safetensors.Map(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	shards := [2][]safetensors.Tensor{}
	index := map[string]string{}
	for i, name := range m.Names() {
		ti := m.Tensors[name]
		shards[i%2] = append(shards[i%2], safetensors.Tensor{Name: name, DType: ti.DType, Shape: ti.Shape, Data: append([]byte(nil), m.Bytes(ti)...)})
		index[name] = []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i%2]
	}
	m.Close()
	os.Remove(filepath.Join(dir, "model.safetensors"))
	for i, s := range shards {
		if err := safetensors.Write(filepath.Join(dir, []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i]), s, nil); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": index})
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
	e, err := Open(dir, Options{Backend: BackendGo})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want := goldenIDs(t, "text-tiny", "generated_ids")
	got, _ := run(t, e, Request{PromptIDs: goldenIDs(t, "text-tiny", "input_ids"), MaxTokens: len(want), IgnoreEOS: true, Sampling: Sampling{Temperature: f32(0)}})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sharded model: %v, want %v", got, want)
		}
	}
}
