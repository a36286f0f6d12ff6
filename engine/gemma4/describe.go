package gemma4

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"perch/engine/checkpoint"
	"perch/engine/safetensors"
	"perch/engine/tensor"
)

// Description is the one account of a checkpoint that the engine, the fit
// check and the model listings share: its family and towers (from
// config.json) and its weight bytes (from the safetensors headers, or a
// download listing's total). memory.go turns it into the memory a backend
// will take.
type Description struct {
	Cfg     *Config
	Family  string // "E2B", "E4B", "12B", "26B-A4B", "31B"; "" for another geometry
	Weights Weights
}

// familyByHidden names the published families by their text hidden size
// (research notes §1.2; the five sizes are distinct).
var familyByHidden = map[int]string{1536: "E2B", 2560: "E4B", 3840: "12B", 2816: "26B-A4B", 5376: "31B"}

// Weights are a checkpoint's tensor bytes as stored.
type Weights struct {
	Text, Vision, Audio int64 // by part (Part); all in Text when not Exact
	// Lookup is the part of Text in the per-layer embedding table
	// (embed_tokens_per_layer: weight, scales, biases), which inference only
	// reads a row of per token; LookupRows is its row count.
	Lookup     int64
	LookupRows int
	// Float is the dtype the model computes in on MLX: embed_tokens' scales
	// (quantized) or weight.
	Float tensor.DType
	// Copied is what the Go backend copies out of the mapped files at load:
	// float32 and integer tensors, and 4- or 2-byte tensors not aligned to
	// their element size in the file (mlx-community files interleave 2-byte
	// scalars, so later uint32 weights land off a 4-byte boundary).
	// LookupCopied says whether the per-layer embedding table is among them.
	Copied       int64
	LookupCopied bool
	// Exact is true when the figures come from the safetensors headers;
	// false for a listing's total (split and Lookup then estimated).
	Exact bool
}

// Total is every tensor byte.
func (w Weights) Total() int64 { return w.Text + w.Vision + w.Audio }

// Towers is the vision and audio bytes.
func (w Weights) Towers() int64 { return w.Vision + w.Audio }

// Describe pairs a parsed config with its weights.
func Describe(cfg *Config, w Weights) *Description {
	return &Description{Cfg: cfg, Family: familyByHidden[cfg.Text.HiddenSize], Weights: w}
}

// DescribeDir reads dir's config.json and safetensors headers (no weights
// are mapped).
func DescribeDir(dir string) (*Description, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	w, err := ReadWeights(dir, cfg)
	if err != nil {
		return nil, err
	}
	return Describe(cfg, w), nil
}

// DescribeRemote describes a checkpoint from its config.json and the total
// size of its weight files (a Hub listing, before download).
func DescribeRemote(config []byte, total int64) (*Description, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	w := Weights{Text: total, Float: configFloat(cfg)}
	w.Lookup, w.LookupRows = estimatedLookup(cfg)
	w.Lookup = min(w.Lookup, total)
	return Describe(cfg, w), nil
}

// ReadWeights sums the tensor bytes of the shards the checkpoint loader
// opens, by part, from their headers.
func ReadWeights(dir string, cfg *Config) (Weights, error) {
	shards, err := checkpoint.Shards(dir)
	if err != nil {
		return Weights{}, err
	}
	w := Weights{Exact: true, Float: configFloat(cfg), LookupRows: cfg.Text.VocabSizePerLayerInput}
	dtypes := map[string]string{}
	for _, s := range shards {
		h, err := safetensors.ReadHeader(filepath.Join(dir, s))
		if err != nil {
			return Weights{}, err
		}
		for _, t := range h.Tensors {
			n := t.End - t.Begin
			dtypes[t.Name] = t.DType
			copied := goCopies(t)
			if copied {
				w.Copied += n
			}
			switch Part(t.Name) {
			case "vision":
				w.Vision += n
			case "audio":
				w.Audio += n
			default:
				w.Text += n
				if strings.Contains(t.Name, "embed_tokens_per_layer.") {
					w.Lookup += n
					w.LookupCopied = w.LookupCopied || copied
				}
			}
		}
	}
	prefix := pick(func(n string) bool { _, ok := dtypes[n]; return ok }, textPrefixes, probeText)
	for _, n := range []string{prefix + "embed_tokens.scales", prefix + "embed_tokens.weight"} {
		if dt, ok := tensor.ParseDType(dtypes[n]); ok && dt.IsFloat() {
			w.Float = dt
			break
		}
	}
	return w, nil
}

// goCopies reports whether the Go backend copies t rather than aliasing
// the mapped file (engine/gocpu FromBytes: it aliases uint32 and 2-byte
// floats at an aligned address; a shard's mapping starts on a page).
func goCopies(t safetensors.TensorInfo) bool {
	switch t.DType {
	case "U32":
		return t.Begin%4 != 0
	case "BF16", "F16":
		return t.Begin%2 != 0
	}
	return true
}

// configFloat is the float dtype config.json declares (mlx-community and
// google/* checkpoints are bfloat16 whatever they say).
func configFloat(cfg *Config) tensor.DType {
	var doc struct {
		DType string `json:"dtype"`
		Torch string `json:"torch_dtype"`
	}
	json.Unmarshal(cfg.raw, &doc)
	s := doc.DType
	if s == "" {
		s = doc.Torch
	}
	switch strings.ToLower(s) {
	case "float32":
		return tensor.Float32
	case "float16":
		return tensor.Float16
	}
	return tensor.BFloat16
}

// estimatedLookup is the per-layer embedding table's bytes from the config
// alone: rows × NL·P values, quantized as the config says.
func estimatedLookup(cfg *Config) (int64, int) {
	t := &cfg.Text
	rows, cols := int64(t.VocabSizePerLayerInput), int64(t.NumHiddenLayers*t.HiddenSizePerLayerInput)
	if t.HiddenSizePerLayerInput <= 0 || rows <= 0 {
		return 0, 0
	}
	q := cfg.Quant
	if o, ok := cfg.QuantOverrides["language_model.model.embed_tokens_per_layer"]; ok {
		q = Quant{}
		if o != nil {
			q = *o
		}
	}
	if q.Bits == 0 || q.GroupSize <= 0 {
		return rows * cols * 2, int(rows)
	}
	return rows*cols*int64(q.Bits)/8 + rows*cols/int64(q.GroupSize)*2*2, int(rows)
}

// Name is "Gemma-4 E2B", or "Gemma-4" for a geometry of no published family.
func (d *Description) Name() string {
	if d.Family == "" {
		return "Gemma-4"
	}
	return "Gemma-4 " + d.Family
}

// Vision, Audio and Video say which inputs the checkpoint takes (video
// frames go through the image path).
func (d *Description) Vision() bool { return d.Cfg.Vision != nil }
func (d *Description) Audio() bool  { return d.Cfg.Audio != nil }
func (d *Description) Video() bool  { return d.Vision() }

// Kind is the variant: "MoE", "per-layer embeddings", "encoder-free" or
// "dense".
func (d *Description) Kind() string {
	t := &d.Cfg.Text
	switch {
	case t.EnableMoEBlock:
		return "MoE"
	case t.HiddenSizePerLayerInput > 0:
		return "per-layer embeddings"
	case d.Cfg.Vision != nil && d.Cfg.Vision.Unified():
		return "encoder-free"
	}
	return "dense"
}

// Quantization is "4-bit", "8-bit", or the float dtype ("bf16").
func (d *Description) Quantization() string {
	if d.Cfg.Quant.Bits > 0 {
		return fmt.Sprintf("%d-bit", d.Cfg.Quant.Bits)
	}
	return map[tensor.DType]string{tensor.BFloat16: "bf16", tensor.Float16: "f16", tensor.Float32: "f32"}[d.Weights.Float]
}

// ContextLength is the model's max_position_embeddings.
func (d *Description) ContextLength() int { return d.Cfg.Text.MaxPositionEmbeddings }
