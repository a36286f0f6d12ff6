package gemma4_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/checkpoint"
	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/safetensors"
	"perch/engine/tensor"
)

// TestAudioPyTorchConvLayout: a checkpoint with PyTorch conv layouts
// ([C_out, C_in, kH, kW], depthwise [C, 1, K]) encodes exactly like the
// MLX-layout original.
func TestAudioPyTorchConvLayout(t *testing.T) {
	src := filepath.Join(testdata, "models", "text-tiny")
	dir := t.TempDir()
	rewriteCheckpoint(t, src, dir, func(st safetensors.Tensor) []safetensors.Tensor {
		switch {
		case strings.HasSuffix(st.Name, "subsample_conv_projection.layer0.conv.weight"),
			strings.HasSuffix(st.Name, "subsample_conv_projection.layer1.conv.weight"):
			st.Data, st.Shape = permuteF32(st.Data, st.Shape, 0, 3, 1, 2) // [O, kH, kW, I] -> [O, I, kH, kW]
		case strings.HasSuffix(st.Name, "depthwise_conv1d.weight"):
			st.Data, st.Shape = permuteF32(st.Data, st.Shape, 0, 2, 1) // [C, K, 1] -> [C, 1, K]
		}
		return []safetensors.Tensor{st}
	})
	b := gocpu.New(gocpu.Options{})
	defer b.Close()
	mel, valid := goldenMel(t, b, openGolden(t, "audio-tiny"))
	encode := func(dir string) []float32 {
		a := loadAudioDir(t, b, dir)
		feats, _, err := a.Encode(mel, valid)
		if err != nil {
			t.Fatal(err)
		}
		return must(b.Float32s(feats))
	}
	checkClose(t, "PyTorch vs MLX conv layout", encode(dir), encode(src), 0)
}

// TestAudioQuantizedProjection: a 4-bit embed_audio.embedding_projection
// (as in mlx-community checkpoints) loads and matches a dense copy of its
// dequantized weights (same values, different kernels: atol 1e-4).
func TestAudioQuantizedProjection(t *testing.T) {
	src := filepath.Join(testdata, "models", "vision-unified-tiny")
	qdir, ddir := t.TempDir(), t.TempDir()
	const bits, group = 4, 64
	quantize := func(dense bool) func(safetensors.Tensor) []safetensors.Tensor {
		return func(st safetensors.Tensor) []safetensors.Tensor {
			if st.Name != "embed_audio.embedding_projection.weight" {
				return []safetensors.Tensor{st}
			}
			out, in := st.Shape[0], st.Shape[1]
			packed, scales, biases := synth.Quantize(f32s(st.Data), out, in, bits, group)
			if dense {
				return []safetensors.Tensor{{Name: st.Name, DType: "F32", Shape: st.Shape, Data: f32bytes(dequantize(packed, scales, biases, out*in, bits, group))}}
			}
			pre := strings.TrimSuffix(st.Name, ".weight")
			pb := make([]byte, 4*len(packed))
			for i, q := range packed {
				binary.LittleEndian.PutUint32(pb[4*i:], q)
			}
			return []safetensors.Tensor{
				{Name: st.Name, DType: "U32", Shape: []int{out, in * bits / 32}, Data: pb},
				{Name: pre + ".scales", DType: "F32", Shape: []int{out, in / group}, Data: f32bytes(scales)},
				{Name: pre + ".biases", DType: "F32", Shape: []int{out, in / group}, Data: f32bytes(biases)},
			}
		}
	}
	rewriteCheckpoint(t, src, qdir, quantize(false))
	rewriteCheckpoint(t, src, ddir, quantize(true))
	wave := must(openGolden(t, "vision-unified-tiny").F32("audio_waveform"))
	for bn, mk := range backends() {
		t.Run(bn, func(t *testing.T) {
			b := mk()
			defer b.Close()
			q := loadAudioDir(t, b, qdir)
			if !q.EmbedAudio.EmbeddingProjection.Quantized() {
				t.Fatal("embedding_projection did not load as quantized")
			}
			gq := must(q.EncodeWaveform(wave))
			gd := must(loadAudioDir(t, b, ddir).EncodeWaveform(wave))
			checkClose(t, "4-bit vs dequantized dense", must(b.Float32s(gq)), must(b.Float32s(gd)), audioTowerAtol)
		})
	}
}

// TestAudioLoadErrors: a missing clip scalar or a conv weight in neither
// layout is a load error naming the tensor.
func TestAudioLoadErrors(t *testing.T) {
	src := filepath.Join(testdata, "models", "text-tiny")
	cases := map[string]func(safetensors.Tensor) []safetensors.Tensor{
		"audio_tower.layers.1.self_attn.post.output_max": func(st safetensors.Tensor) []safetensors.Tensor {
			if st.Name == "audio_tower.layers.1.self_attn.post.output_max" {
				return nil
			}
			return []safetensors.Tensor{st}
		},
		"audio_tower.layers.0.lconv1d.depthwise_conv1d.weight": func(st safetensors.Tensor) []safetensors.Tensor {
			if st.Name == "audio_tower.layers.0.lconv1d.depthwise_conv1d.weight" {
				st.Shape = []int{32, 1, 1, 5}
			}
			return []safetensors.Tensor{st}
		},
	}
	b := gocpu.New(gocpu.Options{})
	defer b.Close()
	for name, edit := range cases {
		dir := t.TempDir()
		rewriteCheckpoint(t, src, dir, edit)
		ck := must(checkpoint.Open(dir))
		_, err := gemma4.LoadAudio(b, ck, must(gemma4.LoadConfig(dir)))
		ck.Close()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error naming %s, got %v", name, err)
		} else {
			t.Log(err)
		}
	}
}

func loadAudioDir(t *testing.T, b tensor.Backend, dir string) *gemma4.AudioTower {
	t.Helper()
	cfg := must(gemma4.LoadConfig(dir))
	ck := must(checkpoint.Open(dir))
	t.Cleanup(func() { ck.Close() })
	return must(gemma4.LoadAudio(b, ck, cfg))
}

// rewriteCheckpoint copies src's config.json and model.safetensors into
// dir, passing every tensor through edit.
func rewriteCheckpoint(t *testing.T, src, dir string, edit func(safetensors.Tensor) []safetensors.Tensor) {
	t.Helper()
	cfg := must(os.ReadFile(filepath.Join(src, "config.json")))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	f := must(safetensors.Map(filepath.Join(src, "model.safetensors")))
	defer f.Close()
	var out []safetensors.Tensor
	for _, name := range f.Names() {
		info := f.Tensors[name]
		st := safetensors.Tensor{Name: name, DType: info.DType, Shape: info.Shape, Data: slices.Clone(f.Bytes(info))}
		out = append(out, edit(st)...)
	}
	if err := safetensors.Write(filepath.Join(dir, "model.safetensors"), out, nil); err != nil {
		t.Fatal(err)
	}
}

func f32s(data []byte) []float32 {
	v := make([]float32, len(data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return v
}

func f32bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// dequantize is MLX affine: w = q*scale + bias, q packed low bits first.
func dequantize(packed []uint32, scales, biases []float32, n, bits, group int) []float32 {
	per, mask := 32/bits, uint32(1)<<bits-1
	w := make([]float32, n)
	for i := range w {
		q := packed[i/per] >> (uint(i%per) * uint(bits)) & mask
		w[i] = float32(q)*scales[i/group] + biases[i/group]
	}
	return w
}

// permuteF32 transposes a float32 tensor's bytes: out axis i = in axis perm[i].
func permuteF32(data []byte, shape []int, perm ...int) ([]byte, []int) {
	b := gocpu.New(gocpu.Options{Plain: true})
	x := b.Transpose(b.FromFloat32(f32s(data), shape, tensor.Float32), perm...)
	return f32bytes(must(b.Float32s(x))), x.Shape()
}
