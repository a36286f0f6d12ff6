package gemma4_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gocpu"
)

// TestIntDecodeKL: the integer decode (gocpu.Options.IntDecode) judged as
// TestIntPrefillKL judges the integer prefill, with the same bounds: each
// prompt is decoded one token at a time (every matvec one row, as in
// generation) on the exact path and on the int8 one, and the next-token
// distributions of every step compared. Weights the integer decode does
// not cover (not 4-bit, or IEEE-half scales) give 0. The engine's default
// follows the gate (judgeInt8).
func TestIntDecodeKL(t *testing.T) {
	type run struct {
		name, dir string
		prompt    []int32
	}
	var runs []run
	for _, fx := range textFixtures {
		g := openGolden(t, fx.golden)
		runs = append(runs, run{fx.model, filepath.Join(testdata, "models", fx.model), must(g.I32("full_sequence_ids"))})
	}
	if _, err := os.Stat(filepath.Join(e2bShaped, "model.safetensors")); err == nil {
		p := make([]int32, 64)
		for i := range p {
			p[i] = int32(3 + (i*37+64)%1000)
		}
		runs = append(runs, run{"e2b-shaped-4bit", e2bShaped, p})
	} else {
		t.Logf("e2b-shaped-4bit: not run: %s is made by make bench (BenchmarkEngine)", e2bShaped)
	}
	for _, r := range runs {
		exact, fast := gocpu.New(gocpu.Options{}), gocpu.New(gocpu.Options{IntDecode: true})
		le, V := decodeLogits(t, exact, r.dir, r.prompt)
		lf, _ := decodeLogits(t, fast, r.dir, r.prompt)
		kernels := fast.Kernels()
		exact.Close()
		fast.Close()
		if slices.Equal(le, lf) {
			t.Logf("%-16s positions %4d  the same logits: no 4-bit weights the integer decode covers", r.name, len(le)/V)
			continue
		}
		mean, p99, top1 := klStats(le, lf, V)
		cfg, err := gemma4.LoadConfig(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		judgeInt8(t, "the int8 decode", r.name, cfg.Text.HiddenSize, len(le)/V, mean, p99, top1, kernels)
	}
}

// decodeLogits feeds prompt one token at a time through the model in dir
// on b and returns the logits of every step, [len(prompt), V].
func decodeLogits(t *testing.T, b *gocpu.Backend, dir string, prompt []int32) ([]float32, int) {
	t.Helper()
	m, err := gemma4.Load(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	caches := m.Text.NewCaches()
	var out []float32
	for _, id := range prompt {
		out = append(out, must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, []int32{id})}, caches)))...)
	}
	return out, m.Cfg.Text.VocabSize
}
