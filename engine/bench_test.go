package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/mlx"
)

// e2bShaped is Gemma-4 E2B's text geometry with 10 layers instead of 35
// (two [S,S,S,S,F] blocks; the last five share K/V and use the double-wide
// MLP, as E2B's last 20 do).
func e2bShapedConfig() []byte {
	types := []string{}
	for i := 0; i < 2; i++ {
		types = append(types, "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention")
	}
	text := map[string]any{
		"model_type": "gemma4_text", "hidden_size": 1536, "num_hidden_layers": 10, "intermediate_size": 6144,
		"num_attention_heads": 8, "num_key_value_heads": 1, "num_global_key_value_heads": nil,
		"head_dim": 256, "global_head_dim": 512, "layer_types": types, "sliding_window": 512,
		"num_kv_shared_layers": 5, "hidden_size_per_layer_input": 256, "vocab_size": 262144,
		"vocab_size_per_layer_input": 262144, "use_double_wide_mlp": true, "attention_k_eq_v": false,
		"enable_moe_block": false, "final_logit_softcapping": 30.0, "rms_norm_eps": 1e-6,
		"rope_parameters": map[string]any{
			"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 10000.0},
			"full_attention":    map[string]any{"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25},
		},
		"hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072, "tie_word_embeddings": true,
	}
	// Towers at E2B's real dims; special ids are the tiny tokenizer's.
	vision := map[string]any{
		"model_type": "gemma4_vision", "hidden_size": 768, "num_hidden_layers": 16, "num_attention_heads": 12,
		"num_key_value_heads": 12, "head_dim": 64, "intermediate_size": 3072, "patch_size": 16,
		"pooling_kernel_size": 3, "position_embedding_size": 10240, "default_output_length": 280,
		"standardize": false, "use_clipped_linears": true, "rms_norm_eps": 1e-6,
		"rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 100.0},
	}
	audio := map[string]any{
		"model_type": "gemma4_audio", "hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 8,
		"hidden_act": "silu", "subsampling_conv_channels": []int{128, 32}, "conv_kernel_size": 5,
		"residual_weight": 0.5, "attention_chunk_size": 12, "attention_context_left": 13,
		"attention_context_right": 0, "attention_logit_cap": 50.0, "attention_invalid_logits_value": -1e9,
		"use_clipped_linears": true, "rms_norm_eps": 1e-6, "gradient_clipping": 1e10, "output_proj_dims": 1536,
	}
	doc := map[string]any{"model_type": "gemma4", "text_config": text, "vision_config": vision, "audio_config": audio,
		"eos_token_id": []int{1, 106}, "image_token_id": 1016, "audio_token_id": 1017, "video_token_id": 1020,
		"boi_token_id": 999, "eoi_token_id": 1018, "boa_token_id": 1000, "eoa_token_id": 1019}
	b, _ := json.Marshal(doc)
	return b
}

// benchModel returns a model folder, generating the E2B-shaped checkpoint
// once into build/bench-cache (it is deterministic).
func benchModel(b *testing.B, name string) string {
	if name == "text-tiny" {
		return filepath.Join(testdata, "models", "text-tiny")
	}
	dir := filepath.Join("..", "build", "bench-cache", "e2b-shaped-4bit-towers")
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		b.Logf("generating the E2B-shaped 4-bit checkpoint in %s (once)", dir)
		if err := synth.Write(dir, e2bShapedConfig(), synth.Options{Bits: 4, Seed: 1, BF16: true}); err != nil {
			b.Fatal(err)
		}
		tiny := filepath.Join(testdata, "models", "text-tiny")
		for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "chat_template.jinja"} {
			data, _ := os.ReadFile(filepath.Join(tiny, f))
			os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
		proc := `{"image_processor": {"max_soft_tokens": 280}, "audio_ms_per_token": 40, "audio_seq_length": 750}`
		os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(proc), 0o644)
	}
	return dir
}

type benchCase struct {
	model   string
	backend string
	prompt  int    // prompt tokens
	steps   int    // decode steps
	threads int    // Go backend workers (0: GOMAXPROCS)
	exact   bool   // Go backend's exact float path (Options.Exact)
	int8dec bool   // exact but for the int8 decode (Options.IntDecode)
	schema  string // a ResponseSchema the answer follows (decode with a grammar)
}

// benchSchema cannot be complete within a benchmark's steps, so every step
// is masked: a string of at least 1,000 characters.
const benchSchema = `{"type":"object","properties":{"text":{"type":"string","minLength":1000}},"required":["text"]}`

// BenchmarkEngine reports, per model and backend: load time, prefill and
// decode speed, peak memory and host time per decode step; on the Go
// backend each E2B-shaped case runs as users get it (int8 activations in
// prefill and decode: the model is wide enough), then exact (/exact),
// side by side (BenchmarkDecodeInt8 takes the int8 decode alone). MLX runs of the
// E2B-shaped checkpoint are kept short: MLX's CPU kernels for 4-bit weights
// take seconds per token.
func BenchmarkEngine(b *testing.B) {
	cases := []benchCase{
		{"text-tiny", BackendGo, 64, 64, 0, false, false, ""},
		{"text-tiny", BackendGo, 64, 64, 0, false, false, benchSchema},
		{"text-tiny", BackendMLX, 64, 64, 0, false, false, ""},
		{"e2b-shaped-4bit", BackendGo, 64, 16, 0, false, false, ""},
		{"e2b-shaped-4bit", BackendGo, 64, 16, 0, true, false, ""},
		{"e2b-shaped-4bit", BackendGo, 64, 16, 0, false, false, benchSchema},
		{"e2b-shaped-4bit", BackendGo, 64, 16, 1, false, false, ""},
		{"e2b-shaped-4bit", BackendGo, 64, 16, 1, true, false, ""},
		{"e2b-shaped-4bit", BackendGo, 256, 16, 0, false, false, ""},
		{"e2b-shaped-4bit", BackendGo, 256, 16, 0, true, false, ""},
		{"e2b-shaped-4bit", BackendGo, 256, 16, 1, false, false, ""},
		{"e2b-shaped-4bit", BackendGo, 256, 16, 1, true, false, ""},
		{"e2b-shaped-4bit", BackendMLX, 4, 3, 0, false, false, ""},
	}
	for _, c := range cases {
		name := c.model + "/" + c.backend
		if c.threads > 0 {
			name += "/threads=" + strconv.Itoa(c.threads)
		}
		if c.model != "text-tiny" && c.backend == BackendGo && c.prompt != 64 {
			name += "/prompt=" + strconv.Itoa(c.prompt)
		}
		if c.exact {
			name += "/exact"
		}
		if c.schema != "" {
			name += "/schema"
		}
		b.Run(name, func(b *testing.B) {
			if c.backend == BackendMLX {
				if err := mlx.Available(); err != nil {
					b.Skip("libmlxc not found: MLX benchmarks skipped")
				}
			}
			dir := benchModel(b, c.model)
			r := openBench(b, dir, c)
			defer r.e.Close()
			var prefill, decode []float64
			var last *Stats
			for i := 0; i < b.N; i++ {
				last = r.request(b, c, c.steps, i+1)
				prefill, decode = append(prefill, last.PrefillTokS), append(decode, last.DecodeTokS)
			}
			b.ReportMetric(r.load.Seconds()*1000, "load_ms")
			b.ReportMetric(r.cold.PrefillTokS, "first_prefill_tok/s")
			b.ReportMetric(median(prefill), "prefill_tok/s")
			b.ReportMetric(median(decode), "decode_tok/s")
			b.ReportMetric(float64(last.PeakMemory)/(1<<20), "peak_MiB")
			b.ReportMetric(float64(last.HostPerStep.Microseconds())/1000, "host_ms/step")
			if c.backend == BackendGo && c.model != "text-tiny" && c.prompt == 64 && c.schema == "" {
				reportBandwidth(b, r, c)
			}
		})
	}
}

type benchResult struct {
	load  time.Duration
	stats *Stats
}

// runBench opens an engine for c, warms it up and returns the stats of
// one request (BenchmarkDecodeInt8 alternates two engines this way).
func runBench(b *testing.B, dir string, c benchCase) benchResult {
	r := openBench(b, dir, c)
	defer r.e.Close()
	return benchResult{r.load, r.request(b, c, c.steps, 1)}
}

// benchEngine is an engine opened for a case and warmed up by one request
// of the case's shape before any timed one, as llama-bench warms up: the
// first request after Open also pays for first touches (the weights'
// pages, the heap's growth), which cold keeps apart.
type benchEngine struct {
	e    *Engine
	load time.Duration
	cold *Stats
}

func openBench(b *testing.B, dir string, c benchCase) *benchEngine {
	runtime.GC()
	t0 := time.Now()
	e, err := Open(dir, Options{Backend: c.backend, Threads: c.threads, Exact: c.exact || c.int8dec, IntDecode: c.int8dec})
	if err != nil {
		b.Fatal(err)
	}
	r := &benchEngine{e: e, load: time.Since(t0)}
	r.cold = r.request(b, c, c.steps, 0)
	return r
}

// request runs c's prompt (its first token varied by run, so that no
// prefix is reused) and steps decode steps; it returns their stats.
func (r *benchEngine) request(b *testing.B, c benchCase, steps, run int) *Stats {
	prompt := make([]int32, c.prompt)
	for i := range prompt {
		prompt[i] = int32(3 + i*37%1000)
	}
	prompt[0] = int32(3 + run%1000)
	zero := float32(0)
	stats := generateStats(b, r.e, Request{PromptIDs: prompt, MaxTokens: steps + 1, IgnoreEOS: true, Sampling: Sampling{Temperature: &zero},
		ResponseSchema: []byte(c.schema)})
	if stats == nil || stats.GeneratedTokens != steps+1 {
		b.Fatalf("generation ended early: %+v", stats)
	}
	return stats
}

// reportBandwidth reports the bytes of weights and KV cache one decode step
// reads on the Go backend (the one-row ops' reads of a request with c.steps
// decode steps, less those of one without) and, against a read-bandwidth
// probe with as many workers measured right after, the share of the
// machine's bandwidth that the median decode speed reaches.
func reportBandwidth(b *testing.B, r *benchEngine, c benchCase) {
	r0 := gocpu.DecodeReads()
	var decode []float64
	for i := 0; i < 3; i++ {
		decode = append(decode, r.request(b, c, c.steps, 100+i).DecodeTokS)
	}
	r1 := gocpu.DecodeReads()
	for i := 0; i < 3; i++ {
		r.request(b, c, 0, 200+i)
	}
	r2 := gocpu.DecodeReads()
	perToken := float64((r1-r0)-(r2-r1)) / float64(3*c.steps)
	threads := c.threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	bw := gocpu.ReadBandwidth(512<<20, threads, 5)
	b.ReportMetric(perToken/1e6, "read_MB/token")
	b.ReportMetric(bw/1e9, "probe_GB/s")
	b.ReportMetric(100*perToken*median(decode)/bw, "bw_share_%")
}

// generateStats runs req to its end and returns its stats (nil if none came).
func generateStats(b *testing.B, e *Engine, req Request) *Stats {
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	var stats *Stats
	for ev := range ch {
		if ev.Kind == EventError {
			b.Fatal(ev.Err)
		}
		if ev.Kind == EventDone {
			stats = ev.Stats
		}
	}
	return stats
}
