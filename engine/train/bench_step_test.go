package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// BenchmarkTrainStep: one SFT step (batch 1, rank 8, default targets) on the
// tiny model (64 tokens) and on an E2B-shaped random 4-bit checkpoint (E2B's
// text geometry with 10 layers, 256 tokens), with and without per-layer
// recompute, on each backend. Reports tokens/s, the backend's peak memory
// during the step and the activation bytes the step held at once.
func BenchmarkTrainStep(b *testing.B) {
	for _, model := range []string{"tiny", "e2b-shaped-4bit"} {
		for _, bc := range goldenBackends() {
			if bc.name == "go-plain" {
				continue
			}
			for _, nr := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/recompute=%v", model, bc.name, !nr)
				b.Run(name, func(b *testing.B) {
					be := bc.make(b)
					benchStep(b, be, model, Options{Method: SFT, LearningRate: 1e-5, NoRecompute: nr})
				})
			}
		}
	}
}

func benchStep(b *testing.B, be tensor.Backend, model string, o Options) {
	dir, L := filepath.Join(testdata, "models", "text-tiny"), 64
	if model != "tiny" {
		dir, L = e2bShapedDir(b), 256
	}
	m, err := gemma4.Load(be, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	cfg := lora.DefaultConfig()
	ad, err := lora.New(cfg, m, 1)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := NewTrainer(be, m, ad, o)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	ids := make([]int32, L)
	for i := range ids {
		ids[i] = int32(2 + (i*7919)%1000)
	}
	rows := []Row{{IDs: ids, PromptLen: 1, Source: "bench"}}
	if _, err := tr.Step(rows); err != nil { // warm-up
		b.Fatal(err)
	}
	var peak, tape int64
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mt, err := tr.Step(rows)
		if err != nil {
			b.Fatal(err)
		}
		peak, tape = max(peak, mt.PeakMemory), max(tape, mt.TapeBytes)
	}
	b.ReportMetric(float64(L*b.N)/time.Since(start).Seconds(), "tok/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak_MiB")
	b.ReportMetric(float64(tape)/(1<<20), "activations_MiB")
}

// e2bShapedDir writes (once, into build/bench-cache) E2B's text geometry
// with 10 layers, 4-bit: two [S,S,S,S,F] blocks, the last five KV-shared
// with the double-wide MLP.
func e2bShapedDir(b *testing.B) string {
	dir := filepath.Join("..", "..", "build", "bench-cache", "e2b-shaped-4bit-text")
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
		return dir
	}
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	delete(doc, "vision_config")
	delete(doc, "audio_config")
	text := doc["text_config"].(map[string]any)
	var types []string
	for i := 0; i < 2; i++ {
		types = append(types, "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention")
	}
	for k, v := range map[string]any{"hidden_size": 1536, "num_hidden_layers": 10, "intermediate_size": 6144,
		"num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256, "global_head_dim": 512, "layer_types": types,
		"sliding_window": 512, "num_kv_shared_layers": 5, "hidden_size_per_layer_input": 256, "vocab_size": 262144,
		"vocab_size_per_layer_input": 262144, "max_position_embeddings": 131072} {
		text[k] = v
	}
	cfg, _ := json.Marshal(doc)
	b.Logf("generating the E2B-shaped 4-bit checkpoint in %s (once)", dir)
	if err := synth.Write(dir, cfg, synth.Options{Bits: 4, Seed: 1, BF16: true}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkHead: the training head (TargetLogProbs with its gradient) over
// 256 positions of the E2B-shaped checkpoint's 262144-word tied head on the
// Go backend, with its fused block op and with the same backend's single
// ops (run with -count to interleave them).
func BenchmarkHead(b *testing.B) {
	be := gocpu.New(gocpu.Options{})
	m, err := gemma4.Load(be, e2bShapedDir(b))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const n = 256
	H := m.Text.Cfg.HiddenSize
	ids, tg := make([]int32, n), make([]int32, n)
	for i := range ids {
		ids[i], tg[i] = int32(2+(i*7919)%1000), int32(3+(i*104729)%262000)
	}
	hn := m.Text.HeadNorm(be.Reshape(m.Text.Embed(be.FromInt32(ids, []int{1, n})), n, H))
	tgt := be.FromInt32(tg, []int{n})
	for _, c := range []struct {
		name string
		text *gemma4.Text
	}{{"fused", m.Text}, {"composed", m.Text.WithBackend(singleOps{be}, m.Text.Adapter)}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, d := c.text.TargetLogProbs(hn, tgt, true, headBytes)
				be.Eval(d)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// singleOps hides a backend's fused ops.
type singleOps struct{ tensor.Backend }
