// Command randgguf writes a GGUF file (llama.cpp's "gemma4" architecture,
// float16 weights) with random weights in the text geometry of a Perch
// model folder's config.json, so that llama.cpp can be benchmarked on the
// shapes of BenchmarkEngine/e2b-shaped-4bit. It is a bench tool only: the
// weights are drawn like synth's (std 0.02, norms near 1), or with -copy
// taken from the checkpoint itself (its 4-bit matrices expanded), so that
// both engines run one model; quantize the output with llama.cpp's
// llama-quantize.
//
//	go run ./bench/llamacpp/randgguf -model build/bench-cache/e2b-shaped-4bit-towers -out e2b-f16.gguf [-copy]
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"

	"perch/engine/gemma4"
)

const weightStd = 0.02 // synth's default weight scale

func main() {
	model := flag.String("model", "", "Perch model folder whose config.json gives the shapes")
	out := flag.String("out", "", "GGUF file to write")
	seed := flag.Uint64("seed", 1, "random seed")
	copyWeights := flag.Bool("copy", false, "copy the checkpoint's text weights (4-bit ones expanded) instead of drawing them")
	flag.Parse()
	if *model == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: randgguf -model DIR -out FILE.gguf [-seed N] [-copy]")
		os.Exit(2)
	}
	if err := run(*model, *out, *seed, *copyWeights); err != nil {
		fmt.Fprintln(os.Stderr, "randgguf:", err)
		os.Exit(1)
	}
}

func run(model, out string, seed uint64, copyWeights bool) error {
	cfg, err := gemma4.LoadConfig(model)
	if err != nil {
		return err
	}
	meta, tensors, err := build(&cfg.Text, seed)
	if err != nil {
		return err
	}
	if copyWeights {
		src, err := openSource(model, cfg.Quant.GroupSize, cfg.Quant.Bits)
		if err != nil {
			return err
		}
		defer src.m.Close()
		for _, t := range tensors {
			f, err := src.filler(t.name, t.numel())
			if err != nil {
				return err
			}
			if f != nil {
				t.fill = f
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := writeGGUF(f, meta, tensors); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// build lays out llama.cpp's gemma4 metadata and tensors for t.
func build(t *gemma4.TextConfig, seed uint64) ([]kv, []*tensor, error) {
	if t.EnableMoEBlock || t.AttentionKEqV {
		return nil, nil, fmt.Errorf("MoE and K=V layers are not laid out by this tool")
	}
	full := -1
	swa := make([]bool, t.NumHiddenLayers)
	ff := make([]uint32, t.NumHiddenLayers)
	for i := range swa {
		swa[i] = !t.IsFull(i)
		ff[i] = uint32(t.MLPWidth(i))
		if t.IsFull(i) && full < 0 {
			full = i
		}
	}
	if full < 0 {
		return nil, nil, fmt.Errorf("no full-attention layer")
	}
	fullRope, swaRope := t.RopeParameters["full_attention"], t.RopeParameters["sliding_attention"]
	u := func(v int) uint32 { return uint32(v) }
	a := "gemma4."
	meta := []kv{
		{"general.architecture", "gemma4"},
		{"general.name", "perch-random-" + fmt.Sprint(t.NumHiddenLayers) + "-layers"},
		{"general.file_type", uint32(1)}, // mostly F16
		{"general.alignment", uint32(ggufAlign)},
		{a + "context_length", u(t.MaxPositionEmbeddings)},
		{a + "embedding_length", u(t.HiddenSize)},
		{a + "block_count", u(t.NumHiddenLayers)},
		{a + "feed_forward_length", ff},
		{a + "attention.head_count", u(t.NumAttentionHeads)},
		{a + "attention.head_count_kv", u(t.NumKeyValueHeads)},
		{a + "attention.layer_norm_rms_epsilon", float32(t.RMSNormEps)},
		{a + "attention.key_length", u(t.GlobalHeadDim)},
		{a + "attention.value_length", u(t.GlobalHeadDim)},
		{a + "attention.key_length_swa", u(t.HeadDim)},
		{a + "attention.value_length_swa", u(t.HeadDim)},
		{a + "attention.sliding_window", u(t.SlidingWindow)},
		{a + "attention.sliding_window_pattern", swa},
		{a + "attention.shared_kv_layers", u(t.NumKVSharedLayers)},
		{a + "embedding_length_per_layer_input", u(t.HiddenSizePerLayerInput)},
		{a + "rope.freq_base", float32(fullRope.RopeTheta)},
		{a + "rope.freq_base_swa", float32(swaRope.RopeTheta)},
		{a + "rope.dimension_count", u(t.GlobalHeadDim)},
		{a + "rope.dimension_count_swa", u(int(float64(t.HeadDim) * orOne(swaRope.PartialRotaryFactor)))},
		{a + "final_logit_softcapping", float32(t.FinalLogitSoftcapping)},
	}
	meta = append(meta, vocab(t.VocabSize)...)

	H, NL, P, V := uint64(t.HiddenSize), uint64(t.NumHiddenLayers), uint64(t.HiddenSizePerLayerInput), uint64(t.VocabSize)
	var ts []*tensor
	mat := func(name string, in, outDim uint64) {
		ts = append(ts, &tensor{name: name, dims: []uint64{in, outDim}, typ: typeF16, fill: normal(seed, name, 0, weightStd)})
	}
	vec := func(name string, n uint64, fill filler) {
		if fill == nil {
			fill = normal(seed, name, 1, 0.1)
		}
		ts = append(ts, &tensor{name: name, dims: []uint64{n}, typ: typeF32, fill: fill})
	}
	mat("token_embd.weight", H, V)
	if P > 0 {
		ts = append(ts, &tensor{name: "per_layer_token_embd.weight", dims: []uint64{NL * P, uint64(t.VocabSizePerLayerInput)},
			typ: typeF16, fill: normal(seed, "per_layer_token_embd.weight", 0, weightStd)})
		mat("per_layer_model_proj.weight", H, NL*P)
		vec("per_layer_proj_norm.weight", P, nil)
	}
	vec("output_norm.weight", H, nil)
	// Proportional RoPE on the full layers: rotate the first
	// partial_rotary_factor of each half, leave the rest (frequency factor
	// 1e30, as llama.cpp's converter writes).
	half := t.GlobalHeadDim / 2
	rot := int(float64(t.GlobalHeadDim) * orOne(fullRope.PartialRotaryFactor) / 2)
	vec("rope_freqs.weight", uint64(half), func(_ uint64, emit func(float32)) {
		for i := 0; i < half; i++ {
			if i < rot {
				emit(1)
			} else {
				emit(1e30)
			}
		}
	})
	for i := 0; i < t.NumHiddenLayers; i++ {
		b := fmt.Sprintf("blk.%d.", i)
		hd, nH, nKV := uint64(t.HeadDimOf(i)), uint64(t.NumAttentionHeads), uint64(t.KVHeadsOf(i))
		I := uint64(t.MLPWidth(i))
		vec(b+"attn_norm.weight", H, nil)
		mat(b+"attn_q.weight", H, nH*hd)
		if t.KVDonor(i) == i {
			mat(b+"attn_k.weight", H, nKV*hd)
			mat(b+"attn_v.weight", H, nKV*hd)
			vec(b+"attn_k_norm.weight", hd, nil)
		}
		mat(b+"attn_output.weight", nH*hd, H)
		vec(b+"attn_q_norm.weight", hd, nil)
		vec(b+"post_attention_norm.weight", H, nil)
		vec(b+"layer_output_scale.weight", 1, uniform(seed, b+"layer_output_scale.weight", 0.5, 1.5))
		vec(b+"ffn_norm.weight", H, nil)
		mat(b+"ffn_gate.weight", H, I)
		mat(b+"ffn_up.weight", H, I)
		mat(b+"ffn_down.weight", I, H)
		vec(b+"post_ffw_norm.weight", H, nil)
		if P > 0 {
			mat(b+"inp_gate.weight", H, P)
			mat(b+"proj.weight", P, H)
			vec(b+"post_norm.weight", H, nil)
		}
	}
	return meta, ts, nil
}

func orOne(f float64) float64 {
	if f == 0 {
		return 1
	}
	return f
}

// rng is one tensor's deterministic stream.
func rng(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func normal(seed uint64, name string, mean, std float32) filler {
	return func(n uint64, emit func(float32)) {
		r := rng(seed, name)
		for ; n > 0; n-- {
			emit(mean + std*float32(r.NormFloat64()))
		}
	}
}

func uniform(seed uint64, name string, lo, hi float32) filler {
	return func(n uint64, emit func(float32)) {
		r := rng(seed, name)
		for ; n > 0; n-- {
			emit(lo + (hi-lo)*r.Float32())
		}
	}
}
