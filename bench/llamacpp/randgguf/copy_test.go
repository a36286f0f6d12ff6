package main

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"perch/engine/safetensors"
)

func bf16s(vs ...float32) []byte {
	var out []byte
	for _, v := range vs {
		out = binary.LittleEndian.AppendUint16(out, uint16(math.Float32bits(v)>>16))
	}
	return out
}

// A 2×64 4-bit matrix (groups of 32) and a norm come back as the values
// they stand for, under llama.cpp's names.
func TestCopyExpandsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	var words []byte
	want := make([]float32, 0, 128)
	scales, biases := []float32{0.5, 2, -1, 0.25}, []float32{-1, 0, 3, 0.5}
	for r := 0; r < 2; r++ {
		for w := 0; w < 8; w++ { // 8 words of 8 nibbles per row
			var word uint32
			for k := 0; k < 8; k++ {
				q := uint32((r*64 + w*8 + k) * 7 % 16)
				word |= q << (4 * k)
				g := r*2 + (w*8+k)/32
				want = append(want, scales[g]*float32(q)+biases[g])
			}
			words = binary.LittleEndian.AppendUint32(words, word)
		}
	}
	p := "language_model.model."
	err := safetensors.Write(filepath.Join(dir, "model.safetensors"), []safetensors.Tensor{
		{Name: p + "embed_tokens.weight", DType: "BF16", Shape: []int{1}, Data: bf16s(1)},
		{Name: p + "layers.3.mlp.up_proj.weight", DType: "U32", Shape: []int{2, 8}, Data: words},
		{Name: p + "layers.3.mlp.up_proj.scales", DType: "BF16", Shape: []int{2, 2}, Data: bf16s(scales...)},
		{Name: p + "layers.3.mlp.up_proj.biases", DType: "BF16", Shape: []int{2, 2}, Data: bf16s(biases...)},
		{Name: p + "layers.3.layer_scalar", DType: "BF16", Shape: []int{1}, Data: bf16s(0.75)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := openSource(dir, 32, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer src.m.Close()
	read := func(name string, n uint64) []float32 {
		f, err := src.filler(name, n)
		if err != nil || f == nil {
			t.Fatalf("%s: filler %v, %v", name, f != nil, err)
		}
		var out []float32
		f(n, func(v float32) { out = append(out, v) })
		return out
	}
	got := read("blk.3.ffn_up.weight", 128)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d = %g, want %g", i, got[i], want[i])
		}
	}
	if got := read("blk.3.layer_output_scale.weight", 1); got[0] != 0.75 {
		t.Errorf("layer scale %g, want 0.75", got[0])
	}
	if f, err := src.filler("rope_freqs.weight", 4); f != nil || err != nil {
		t.Errorf("rope_freqs has no checkpoint tensor: got %v, %v", f != nil, err)
	}
	if _, err := src.filler("blk.3.ffn_up.weight", 64); err == nil {
		t.Error("a GGUF shape the checkpoint does not have was accepted")
	}
	if _, err := src.filler("blk.4.ffn_up.weight", 128); err == nil {
		t.Error("a missing tensor was accepted")
	}
}
