// Package synth writes random-weight Gemma-4 checkpoints in the
// mlx-community layout for any text config: the tests use tiny ones to
// cover every family, the benchmarks an E2B-shaped 4-bit one.
package synth

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"perch/engine/gemma4"
	"perch/engine/safetensors"
)

// Options choose the weight format.
type Options struct {
	Bits      int // 0: float32 weights; 4 or 8: MLX affine quantization of every linear
	GroupSize int // default 64
	Seed      uint64
	Scale     float32 // weight std (default 0.02)
	BF16      bool    // store float tensors (norms, scales, biases) as bfloat16, as mlx-community does
}

// Write creates dir/config.json and dir/model.safetensors from a config.json
// document: the text model, and the towers its vision_config and
// audio_config describe (dense, as mlx-community keeps them).
func Write(dir string, config []byte, opt Options) error {
	if opt.GroupSize == 0 {
		opt.GroupSize = 64
	}
	if opt.Scale == 0 {
		opt.Scale = 0.02
	}
	cfg, err := gemma4.ParseConfig(config)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(config, &doc); err != nil {
		return err
	}
	if opt.Bits > 0 {
		doc["quantization"] = map[string]any{"group_size": opt.GroupSize, "bits": opt.Bits, "mode": "affine"}
	}
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, gemma4.ConfigFile), out, 0o644); err != nil {
		return err
	}
	w := &writer{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 7))}
	w.text(&cfg.Text)
	if vc, err := gemma4.ParseVisionConfig(cfg.VisionConfig); err != nil {
		return err
	} else if vc != nil {
		if err := w.vision(vc, cfg.Text.HiddenSize); err != nil {
			return err
		}
	}
	if ac, err := gemma4.ParseAudioConfig(cfg.AudioConfig); err != nil {
		return err
	} else if ac != nil {
		if err := w.audio(ac, cfg.Text.HiddenSize); err != nil {
			return err
		}
	}
	return safetensors.Write(filepath.Join(dir, "model.safetensors"), w.tensors, map[string]string{"format": "mlx"})
}

type writer struct {
	opt     Options
	rng     *rand.Rand
	tensors []safetensors.Tensor
}

func (w *writer) normal(n int, mean, std float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = mean + std*float32(w.rng.NormFloat64())
	}
	return v
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func (w *writer) dense(name string, v []float32, shape ...int) {
	if w.opt.BF16 {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(math.Float32bits(x)>>16))
		}
		w.tensors = append(w.tensors, safetensors.Tensor{Name: name, DType: "BF16", Shape: shape, Data: b})
		return
	}
	w.tensors = append(w.tensors, safetensors.Tensor{Name: name, DType: "F32", Shape: shape, Data: f32bytes(v)})
}

// norm writes an RMSNorm weight near 1.
func (w *writer) norm(name string, n int) { w.dense(name, w.normal(n, 1, 0.1), n) }

// linear writes a [out, in] (or [experts, out, in]) weight, quantized when asked.
func (w *writer) linear(prefix string, experts, out, in int) {
	rows := out * max(experts, 1)
	v := w.normal(rows*in, 0, w.opt.Scale)
	lead := []int{}
	if experts > 0 {
		lead = []int{experts}
	}
	if w.opt.Bits == 0 || in%w.opt.GroupSize != 0 {
		w.dense(prefix+".weight", v, append(lead, out, in)...)
		return
	}
	packed, scales, biases := Quantize(v, rows, in, w.opt.Bits, w.opt.GroupSize)
	pb := make([]byte, 4*len(packed))
	for i, q := range packed {
		binary.LittleEndian.PutUint32(pb[4*i:], q)
	}
	g := in / w.opt.GroupSize
	w.tensors = append(w.tensors,
		safetensors.Tensor{Name: prefix + ".weight", DType: "U32", Shape: append(lead, out, in*w.opt.Bits/32), Data: pb})
	w.dense(prefix+".scales", scales, append(lead, out, g)...)
	w.dense(prefix+".biases", biases, append(lead, out, g)...)
}

// Quantize packs rows x in float weights into MLX affine form: per group,
// scale = (max-min)/(2^bits-1), bias = min, q = round((w-bias)/scale),
// packed low bits first.
func Quantize(v []float32, rows, in, bits, group int) (packed []uint32, scales, biases []float32) {
	per := 32 / bits
	levels := float32(int(1)<<bits - 1)
	packed = make([]uint32, rows*in/per)
	g := in / group
	scales, biases = make([]float32, rows*g), make([]float32, rows*g)
	for r := 0; r < rows; r++ {
		for k := 0; k < g; k++ {
			vals := v[r*in+k*group : r*in+(k+1)*group]
			lo, hi := vals[0], vals[0]
			for _, x := range vals {
				lo, hi = min(lo, x), max(hi, x)
			}
			s := (hi - lo) / levels
			if s == 0 {
				s = 1
			}
			scales[r*g+k], biases[r*g+k] = s, lo
			for j, x := range vals {
				q := uint32(math.Round(float64((x - lo) / s)))
				idx := r*in + k*group + j
				packed[idx/per] |= min(q, uint32(levels)) << (uint(idx%per) * uint(bits))
			}
		}
	}
	return packed, scales, biases
}

func (w *writer) text(t *gemma4.TextConfig) {
	p := "language_model.model."
	H, NL, P := t.HiddenSize, t.NumHiddenLayers, t.HiddenSizePerLayerInput
	w.linear(p+"embed_tokens", 0, t.VocabSize, H)
	w.norm(p+"norm.weight", H)
	if P > 0 {
		w.linear(p+"embed_tokens_per_layer", 0, t.VocabSizePerLayerInput, NL*P)
		w.linear(p+"per_layer_model_projection", 0, NL*P, H)
		w.norm(p+"per_layer_projection_norm.weight", P)
	}
	for i := 0; i < NL; i++ {
		l := fmt.Sprintf("%slayers.%d.", p, i)
		hd, nH, nKV := t.HeadDimOf(i), t.NumAttentionHeads, t.KVHeadsOf(i)
		for _, n := range []string{"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"} {
			w.norm(l+n+".weight", H)
		}
		w.dense(l+"layer_scalar", []float32{0.5 + w.rng.Float32()}, 1)
		w.linear(l+"self_attn.q_proj", 0, nH*hd, H)
		w.linear(l+"self_attn.o_proj", 0, H, nH*hd)
		w.norm(l+"self_attn.q_norm.weight", hd)
		if t.KVDonor(i) == i {
			w.linear(l+"self_attn.k_proj", 0, nKV*hd, H)
			if !t.KEqV(i) {
				w.linear(l+"self_attn.v_proj", 0, nKV*hd, H)
			}
			w.norm(l+"self_attn.k_norm.weight", hd)
		}
		I := t.MLPWidth(i)
		w.linear(l+"mlp.gate_proj", 0, I, H)
		w.linear(l+"mlp.up_proj", 0, I, H)
		w.linear(l+"mlp.down_proj", 0, H, I)
		if t.EnableMoEBlock {
			E, MI := t.NumExperts, t.MoEIntermediateSize
			w.linear(l+"router.proj", 0, E, H)
			w.norm(l+"router.scale", H)
			w.dense(l+"router.per_expert_scale", w.normal(E, 1, 0.1), E)
			w.linear(l+"experts.switch_glu.gate_proj", E, MI, H)
			w.linear(l+"experts.switch_glu.up_proj", E, MI, H)
			w.linear(l+"experts.switch_glu.down_proj", E, H, MI)
			for _, n := range []string{"pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"} {
				w.norm(l+n+".weight", H)
			}
		}
		if P > 0 {
			w.linear(l+"per_layer_input_gate", 0, P, H)
			w.linear(l+"per_layer_projection", 0, H, P)
			w.norm(l+"post_per_layer_input_norm.weight", H)
		}
	}
}
