package gemma4_test

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/mlx"
	"perch/engine/tensor"
)

// fullLayers is the depth of the full-width checkpoints: E2B and E4B keep
// enough layers for KV sharing to stay (two shared layers with donors of
// both kinds), the others one sliding and one full layer.
var fullLayers = map[string]int{"E2B": 7, "E4B": 7, "12B": 2, "26B-A4B": 2, "31B": 2}

// fullWidth holds each case's outputs once measured (a benchmark body runs
// more than once; the checkpoints are written once).
var fullWidth sync.Map // backend/family/layout → fullWidthRun

type fullWidthRun struct {
	out   []float32
	bytes int64
}

// BenchmarkPublishedLayoutsFullWidth is TestPublishedLayouts at the
// published widths: every family in every published layout with its
// tensors named and shaped as published, the depth cut by synth.Cut
// (fullLayers), written one case at a time to a temporary folder (up to
// ~6 GB, removed after), loaded with every tensor used, generating 6 tokens
// (finite logits, the last step equal to a fresh prefill) and running both
// towers; google/* bf16 must give exactly the mlx-community bf16 outputs.
// Go backend, and MLX where it has a GPU. make bench runs it: the
// checkpoints are too large for make test.
func BenchmarkPublishedLayoutsFullWidth(b *testing.B) {
	backends := map[string]func() tensor.Backend{"go": func() tensor.Backend { return gocpu.New(gocpu.Options{}) }}
	if mlx.HasGPU() {
		backends["mlx"] = func() tensor.Backend {
			runtime.LockOSThread() // the benchmark's goroutine owns MLX's stream
			bk, err := mlx.New()
			if err != nil {
				b.Fatal(err)
			}
			return bk
		}
	} else {
		b.Log("MLX without a GPU: the full-width layouts run on the Go backend only (MLX's CPU takes minutes a case)")
	}
	for name, mk := range backends {
		for _, f := range publishedFamilies {
			for _, lc := range layoutCases {
				b.Run(name+"/"+f.family+"/"+lc.name, func(b *testing.B) {
					key := name + "/" + f.family + "/" + lc.name
					v, ok := fullWidth.Load(key)
					if !ok {
						v = fullWidthCase(b, mk, f.family, f.mlx, f.google, lc.opt)
						fullWidth.Store(key, v)
					}
					r := v.(fullWidthRun)
					for i := 0; i < b.N; i++ {
						b.ReportMetric(float64(r.bytes)/(1<<30), "checkpoint_GiB")
					}
				})
			}
			hf, okH := fullWidth.Load(name + "/" + f.family + "/google-bf16")
			ml, okM := fullWidth.Load(name + "/" + f.family + "/mlx-bf16")
			if okH && okM {
				checkClose(b, name+" "+f.family+" full width: google/* vs mlx-community bf16", hf.(fullWidthRun).out, ml.(fullWidthRun).out, 0)
			}
		}
	}
}

func fullWidthCase(b *testing.B, mk func() tensor.Backend, family, mlxRepo, googleRepo string, opt synth.Options) fullWidthRun {
	repo := mlxRepo
	if opt.Layout == synth.LayoutHF {
		repo = googleRepo
	}
	raw, err := os.ReadFile(filepath.Join(publishedDir, repo, "config.json"))
	if err != nil {
		b.Fatal(err)
	}
	config, err := synth.Cut(raw, fullLayers[family])
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "perch-layout-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bk := mk()
	defer bk.Close()
	opt.Seed = 11
	out := layoutRun(b, bk, dir, config, opt)
	var size int64
	files, _ := os.ReadDir(dir)
	for _, e := range files {
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
	}
	return fullWidthRun{out: out, bytes: size}
}
