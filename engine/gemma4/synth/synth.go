// Package synth writes random-weight Gemma-4 checkpoints for any config,
// in either published layout: mlx-community (mlx-vlm's converter; dense,
// bf16 or MLX affine 4/8-bit) or Hugging Face (google/*: model.* names,
// fused MoE experts, PyTorch conv order, bf16, sharded). Tests use tiny
// ones to cover every family and layout, the benchmarks full-size ones.
// Tensors stream to disk one at a time, so a 10 GB checkpoint never sits
// in memory, and Inventory lists names, dtypes and shapes without data.
package synth

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"

	"perch/engine/gemma4"
	"perch/engine/safetensors"
)

// Layouts.
const (
	LayoutMLX = "mlx-community"
	LayoutHF  = "hf"
)

// Options choose the weight format.
type Options struct {
	Bits      int // 0: dense; 4 or 8: MLX affine quantization (mlx-community layout only)
	GroupSize int // default 64
	Seed      uint64
	Scale     float32 // weight std (default 0.02)
	BF16      bool    // dense tensors as bfloat16 (always, in the Hugging Face layout)
	Layout    string  // LayoutMLX (default) or LayoutHF
	Shards    int     // safetensors files (default 1; 2 in the Hugging Face layout)
}

func (o *Options) defaults() error {
	if o.GroupSize == 0 {
		o.GroupSize = 64
	}
	if o.Scale == 0 {
		o.Scale = 0.02
	}
	switch o.Layout {
	case "", LayoutMLX:
		o.Layout = LayoutMLX
	case LayoutHF:
		if o.Bits != 0 {
			return fmt.Errorf("synth: Hugging Face checkpoints are not quantized")
		}
		o.BF16 = true
		if o.Shards == 0 {
			o.Shards = 2
		}
	default:
		return fmt.Errorf("synth: unknown layout %q", o.Layout)
	}
	if o.Shards <= 0 {
		o.Shards = 1
	}
	return nil
}

// Write creates dir/config.json and the safetensors files from a
// config.json document: the text model and the towers its vision_config
// and audio_config describe.
func Write(dir string, config []byte, opt Options) error {
	tensors, doc, err := plan(config, &opt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, gemma4.ConfigFile), doc, 0o644); err != nil {
		return err
	}
	return writeShards(dir, tensors, opt)
}

// Inventory lists the tensors Write would store (Data nil; Bytes() gives
// each size), for checking names and shapes of full-size checkpoints.
func Inventory(config []byte, opt Options) ([]safetensors.Tensor, error) {
	tensors, _, err := plan(config, &opt)
	return tensors, err
}

// plan parses config, sets its quantization block as opt asks and lists
// the tensors.
func plan(config []byte, opt *Options) ([]safetensors.Tensor, []byte, error) {
	if err := opt.defaults(); err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(config, &doc); err != nil {
		return nil, nil, err
	}
	setQuantization(doc, *opt)
	out, _ := json.MarshalIndent(doc, "", "  ")
	cfg, err := gemma4.ParseConfig(out)
	if err != nil {
		return nil, nil, err
	}
	w := &writer{opt: *opt, cfg: cfg}
	w.text(&cfg.Text)
	if vc := cfg.Vision; vc != nil {
		w.vision(vc, cfg.Text.HiddenSize)
	}
	if ac := cfg.Audio; ac != nil {
		if err := w.audio(ac, cfg.Text.HiddenSize); err != nil {
			return nil, nil, err
		}
	}
	return w.tensors, out, nil
}

// setQuantization writes mlx-community's identical quantization and
// quantization_config blocks (keeping per-module overrides the document
// already has, such as 26B-A4B's 8-bit routers), or removes them.
func setQuantization(doc map[string]any, opt Options) {
	if opt.Bits == 0 {
		delete(doc, "quantization")
		delete(doc, "quantization_config")
		return
	}
	q, _ := doc["quantization"].(map[string]any)
	if q == nil {
		q = map[string]any{}
	}
	q["group_size"], q["bits"], q["mode"] = opt.GroupSize, opt.Bits, "affine"
	doc["quantization"] = q
	doc["quantization_config"] = q
}

// writer collects tensor specs; each streams deterministic random data
// seeded by its canonical (mlx-community) name, so both layouts of one
// config and seed hold the same values.
type writer struct {
	opt     Options
	cfg     *gemma4.Config
	tensors []safetensors.Tensor
}

func (w *writer) hf() bool { return w.opt.Layout == LayoutHF }

// rng is the random stream of one canonical tensor name.
func (w *writer) rng(canonical string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(canonical))
	return rand.New(rand.NewPCG(w.opt.Seed, h.Sum64()))
}

// stored maps a canonical name to the layout's name.
func (w *writer) stored(canonical string) string {
	if !w.hf() {
		return canonical
	}
	const lm = "language_model.model."
	if len(canonical) > len(lm) && canonical[:len(lm)] == lm {
		return "model.language_model." + canonical[len(lm):]
	}
	return "model." + canonical
}

func (w *writer) floatDType() string {
	if w.opt.BF16 {
		return "BF16"
	}
	return "F32"
}

// quantBits is the bits a linear at canonical path gets (0: dense).
func (w *writer) quantBits(path string, in int) int {
	bits := w.opt.Bits
	if q, ok := w.cfg.QuantOverrides[path]; ok {
		if q == nil {
			return 0
		}
		bits = q.Bits
	}
	if bits == 0 || in%w.opt.GroupSize != 0 {
		return 0
	}
	return bits
}

func writeShards(dir string, tensors []safetensors.Tensor, opt Options) error {
	meta := map[string]string{"format": "mlx"}
	if opt.Layout == LayoutHF {
		meta["format"] = "pt"
	}
	if opt.Shards == 1 {
		return safetensors.Write(filepath.Join(dir, "model.safetensors"), tensors, meta)
	}
	var total int64
	for _, t := range tensors {
		total += t.Bytes()
	}
	shards := make([][]safetensors.Tensor, opt.Shards)
	weightMap := map[string]string{}
	var acc int64
	for _, t := range sortedByName(tensors) {
		i := min(int(acc*int64(opt.Shards)/max(total, 1)), opt.Shards-1)
		shards[i] = append(shards[i], t)
		weightMap[t.Name] = shardName(i, opt.Shards)
		acc += t.Bytes()
	}
	for i, s := range shards {
		if err := safetensors.Write(filepath.Join(dir, shardName(i, opt.Shards)), s, meta); err != nil {
			return err
		}
	}
	idx, _ := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}, "", "  ")
	return os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
}

func shardName(i, n int) string { return fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n) }
