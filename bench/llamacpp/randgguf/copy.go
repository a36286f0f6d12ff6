package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"

	"perch/engine/safetensors"
)

// source supplies tensors from a Perch checkpoint (one model.safetensors,
// MLX names, weights bf16 or affine-quantized) instead of drawing them, so
// that llama.cpp runs the same model as Perch: what each engine's fast path
// moves can then be compared on one model, not on two of the same shapes.
type source struct {
	m         *safetensors.Mapped
	prefix    string
	groupSize int
	bits      int // 0: unquantized
}

func openSource(dir string, groupSize, bits int) (*source, error) {
	m, err := safetensors.Map(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, err
	}
	for _, p := range []string{"language_model.model.", "model.language_model.", "model."} {
		if _, ok := m.Tensors[p+"embed_tokens.weight"]; ok {
			return &source{m: m, prefix: p, groupSize: groupSize, bits: bits}, nil
		}
	}
	m.Close()
	return nil, fmt.Errorf("%s: no language model embed_tokens.weight", dir)
}

// ggufToMLX renames llama.cpp's gemma4 tensors to the checkpoint's.
var (
	ggufTop = map[string]string{
		"token_embd.weight":           "embed_tokens",
		"per_layer_token_embd.weight": "embed_tokens_per_layer",
		"per_layer_model_proj.weight": "per_layer_model_projection",
		"per_layer_proj_norm.weight":  "per_layer_projection_norm",
		"output_norm.weight":          "norm",
	}
	ggufBlock = map[string]string{
		"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
		"attn_v": "self_attn.v_proj", "attn_k_norm": "self_attn.k_norm", "attn_q_norm": "self_attn.q_norm",
		"attn_output": "self_attn.o_proj", "post_attention_norm": "post_attention_layernorm",
		"ffn_norm": "pre_feedforward_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
		"ffn_down": "mlp.down_proj", "post_ffw_norm": "post_feedforward_layernorm",
		"inp_gate": "per_layer_input_gate", "proj": "per_layer_projection", "post_norm": "post_per_layer_input_norm",
	}
	blockName = regexp.MustCompile(`^blk\.(\d+)\.(.+)\.weight$`)
)

// mlxName is the checkpoint's base name (no .weight) for a GGUF tensor, or
// "" when the checkpoint has no counterpart (rope_freqs: generated).
func mlxName(gguf string) (base string, suffix bool) {
	if n, ok := ggufTop[gguf]; ok {
		return n, true
	}
	m := blockName.FindStringSubmatch(gguf)
	if m == nil {
		return "", false
	}
	if m[2] == "layer_output_scale" {
		return "layers." + m[1] + ".layer_scalar", false
	}
	if n, ok := ggufBlock[m[2]]; ok {
		return "layers." + m[1] + "." + n, true
	}
	return "", false
}

// filler returns the values of the GGUF tensor gguf (n of them), or nil
// when the checkpoint has none.
func (s *source) filler(gguf string, n uint64) (filler, error) {
	base, suffix := mlxName(gguf)
	if base == "" {
		return nil, nil
	}
	name := s.prefix + base
	if suffix {
		name += ".weight"
	}
	w, ok := s.m.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("checkpoint has no %s (for %s)", name, gguf)
	}
	if w.DType == "U32" {
		return s.dequantized(name, w, n)
	}
	if uint64(w.Elements()) != n {
		return nil, fmt.Errorf("%s: %d values, %s needs %d", name, w.Elements(), gguf, n)
	}
	conv, err := floatReader(w.DType)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw := s.m.Bytes(w)
	return func(n uint64, emit func(float32)) {
		for i := uint64(0); i < n; i++ {
			emit(conv(raw, i))
		}
	}, nil
}

// dequantized expands an affine-quantized matrix: w = scale·q + bias per
// group, q packed low bits first in little-endian 32-bit words.
func (s *source) dequantized(name string, w safetensors.TensorInfo, n uint64) (filler, error) {
	base := strings.TrimSuffix(name, ".weight")
	sc, ok1 := s.m.Tensors[base+".scales"]
	bi, ok2 := s.m.Tensors[base+".biases"]
	if !ok1 || !ok2 || s.bits == 0 || len(w.Shape) != 2 {
		return nil, fmt.Errorf("%s: packed words without scales and biases", name)
	}
	rows, in := w.Shape[0], w.Shape[1]*32/s.bits
	if uint64(rows*in) != n || int(sc.Elements()) != rows*in/s.groupSize || int(bi.Elements()) != int(sc.Elements()) {
		return nil, fmt.Errorf("%s: %d×%d does not match its scales or the GGUF shape", name, rows, in)
	}
	sconv, err := floatReader(sc.DType)
	if err != nil {
		return nil, err
	}
	bconv, err := floatReader(bi.DType)
	if err != nil {
		return nil, err
	}
	words, scales, biases := s.m.Bytes(w), s.m.Bytes(sc), s.m.Bytes(bi)
	per, mask := 32/s.bits, uint32(1)<<s.bits-1
	return func(n uint64, emit func(float32)) {
		for i := uint64(0); i < n; i++ {
			g := i / uint64(s.groupSize)
			word := binary.LittleEndian.Uint32(words[4*(i/uint64(per)):])
			q := word >> (uint(s.bits) * uint(i%uint64(per))) & mask
			emit(sconv(scales, g)*float32(q) + bconv(biases, g))
		}
	}, nil
}

// floatReader reads element i of raw little-endian data of dtype dt.
func floatReader(dt string) (func(raw []byte, i uint64) float32, error) {
	switch dt {
	case "BF16":
		return func(raw []byte, i uint64) float32 {
			return math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}, nil
	case "F32":
		return func(raw []byte, i uint64) float32 {
			return math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}, nil
	}
	return nil, fmt.Errorf("dtype %s not copied", dt)
}
