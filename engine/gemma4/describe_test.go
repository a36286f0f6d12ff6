package gemma4_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/checkpoint"
	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/kvcache"
	"perch/engine/tensor"
)

func describePublished(t *testing.T, repo string) *gemma4.Description {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(publishedDir, repo, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := gemma4.DescribeRemote(raw, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDescribeFamilies: each published config is named as its family, with
// its towers and variant.
func TestDescribeFamilies(t *testing.T) {
	for _, f := range publishedFamilies {
		for _, repo := range []string{f.google, f.mlx} {
			d := describePublished(t, repo)
			audio := f.family == "E2B" || f.family == "E4B" || f.family == "12B"
			if d.Family != f.family || d.Name() != "Gemma-4 "+f.family || !d.Vision() || d.Audio() != audio || !d.Video() {
				t.Errorf("%s: %s, vision %v, audio %v", repo, d.Name(), d.Vision(), d.Audio())
			}
			t.Logf("%s: %s, %s, %s", repo, d.Name(), d.Kind(), d.Quantization())
		}
	}
}

// TestKVMatchesResearchE4B: research gemma4.md §8.3 states E4B's KV in bf16:
// 4 full donors × K+V × 2 heads × 512 × 2 B = 16 KiB/token, and 20 sliding
// donors × 2 × 2 × 256 × 2 B = 40 KiB/token held for the window.
func TestKVMatchesResearchE4B(t *testing.T) {
	text := &describePublished(t, "google--gemma-4-E4B-it").Cfg.Text
	if got := text.KVPerToken(2); got != 16<<10 {
		t.Fatalf("E4B full-layer KV %d B/token, want 16 KiB", got)
	}
	if got, want := text.KVBytes(8192, 2, 0), int64(8192*16<<10+512*40<<10); got != want {
		t.Fatalf("E4B KV at 8192 without slack: %d, want %d", got, want)
	}
	if got, want := text.KVBytes(8192, 2, 1024), int64(8192*16<<10+1536*40<<10); got != want {
		t.Fatalf("E4B KV at 8192 with slack: %d, want %d", got, want)
	}
	if text.KVBytes(257, 2, 0) != text.KVBytes(512, 2, 0) {
		t.Fatal("full caches grow in 256-token steps")
	}
}

// TestKVBytesIsWhatTheCachesAllocate: after a prefill of n tokens the
// caches hold exactly KVBytes(n) (window + slack slots per sliding donor,
// full caches in 256-token steps), for every family.
func TestKVBytesIsWhatTheCachesAllocate(t *testing.T) {
	for name, mk := range backends() {
		b := mk()
		kvBytesPerFamily(t, name, b)
		b.Close()
	}
}

func kvBytesPerFamily(t *testing.T, backend string, b tensor.Backend) {
	for _, f := range publishedFamilies {
		dir := t.TempDir()
		if err := synth.Write(dir, shrunkConfig(t, f.mlx, f.layers), synth.Options{Seed: 1, BF16: true}); err != nil {
			t.Fatal(err)
		}
		m, err := gemma4.Load(b, dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := gemma4.DescribeDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		rt := d.Runtime(b.Name())
		if rt != gemma4.RuntimeFor(b.Name(), m.Text.DType()) {
			t.Fatalf("%s: description runtime %+v, loaded model's %+v", f.family, rt, gemma4.RuntimeFor(b.Name(), m.Text.DType()))
		}
		for _, slack := range []int{0, 5} {
			m.Text.WindowSlack = slack
			for _, n := range []int{3, 20, 300} {
				seq := make([]int32, n)
				for i := range seq {
					seq[i] = int32(2 + i%400)
				}
				caches := m.Text.NewCaches()
				m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq), LastOnly: true}, caches)
				var held int64
				for _, s := range kvcache.States(caches) {
					n := int64(rt.KVElem)
					for _, dim := range s.Shape() {
						n *= int64(dim)
					}
					held += n
				}
				if want := d.Cfg.Text.KVBytes(n, rt.KVElem, slack); held != want {
					t.Errorf("%s/%s: %d tokens, slack %d: caches hold %d bytes, KVBytes says %d", backend, f.family, n, slack, held, want)
				}
				for _, c := range caches {
					if c != nil {
						c.Release(b)
					}
				}
			}
		}
		m.Close()
	}
}

// TestDescribeDirWeights: the header sums cover every tensor the loader
// maps, split by part; the lookup table is inside the text part.
func TestDescribeDirWeights(t *testing.T) {
	dir := filepath.Join(testdata, "models", "text-tiny")
	d, err := gemma4.DescribeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	w := d.Weights
	if !w.Exact || w.Total() != ck.Bytes() || w.Vision == 0 || w.Audio == 0 || w.Lookup == 0 || w.Lookup >= w.Text {
		t.Fatalf("weights %+v, checkpoint %d bytes", w, ck.Bytes())
	}
	var lookup int64
	for _, n := range ck.Names() {
		if strings.Contains(n, "embed_tokens_per_layer") {
			info, _ := ck.Info(n)
			lookup += info.End - info.Begin
		}
	}
	if lookup != w.Lookup {
		t.Fatalf("lookup table %d bytes, description says %d", lookup, w.Lookup)
	}
}

// TestRemoteLookupEstimate: before download, the per-layer embedding
// table's size follows from the config; it equals the full-size published
// inventory's.
func TestRemoteLookupEstimate(t *testing.T) {
	for repo, opt := range map[string]synth.Options{
		"mlx-community--gemma-4-e2b-it-4bit": {Bits: 4, BF16: true},
		"mlx-community--gemma-4-e2b-it-8bit": {Bits: 8, BF16: true},
		"google--gemma-4-E4B-it":             {Layout: synth.LayoutHF},
	} {
		raw, err := os.ReadFile(filepath.Join(publishedDir, repo, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		inv, err := synth.Inventory(raw, opt)
		if err != nil {
			t.Fatal(err)
		}
		var lookup, total int64
		for _, ts := range inv {
			total += ts.Bytes()
			if strings.Contains(ts.Name, "embed_tokens_per_layer") {
				lookup += ts.Bytes()
			}
		}
		d, err := gemma4.DescribeRemote(raw, total)
		if err != nil {
			t.Fatal(err)
		}
		if d.Weights.Lookup != lookup {
			t.Errorf("%s: estimated lookup table %d, inventory %d", repo, d.Weights.Lookup, lookup)
		}
	}
}
