package gemma4_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// publishedFamilies maps each family to its published repos (testdata/
// published) and the layer count of its shrunk test checkpoints.
var publishedFamilies = []struct {
	family, google, mlx string
	layers              int
}{
	{"E2B", "google--gemma-4-E2B-it", "mlx-community--gemma-4-e2b-it-4bit", 10},
	{"E4B", "google--gemma-4-E4B-it", "mlx-community--gemma-4-e4b-it-4bit", 12},
	{"12B", "google--gemma-4-12B-it", "mlx-community--gemma-4-12B-it-8bit", 6},
	{"26B-A4B", "google--gemma-4-26B-A4B-it", "mlx-community--gemma-4-26b-a4b-it-4bit", 6},
	{"31B", "google--gemma-4-31B-it", "mlx-community--gemma-4-31b-it-4bit", 6},
}

// layoutCases are the published layouts: mlx-community 4-bit, 8-bit and
// bf16, and google/* bf16 (Hugging Face names, fused experts, PyTorch
// conv order, two shards).
var layoutCases = []struct {
	name string
	opt  synth.Options
}{
	{"mlx-4bit", synth.Options{Bits: 4, BF16: true}},
	{"mlx-8bit", synth.Options{Bits: 8, BF16: true}},
	{"mlx-bf16", synth.Options{BF16: true}},
	{"google-bf16", synth.Options{Layout: synth.LayoutHF}},
}

func shrunkConfig(t *testing.T, repo string, layers int) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(publishedDir, repo, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := synth.Shrink(raw, layers)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPublishedLayouts: for every family and published layout, a
// synthetic checkpoint with the real tensor names (fewer layers, small
// widths) loads with every tensor used, generates greedily with finite
// logits, decodes consistently with its prefill, and runs its towers; the
// google/* bf16 layout gives exactly the logits and tower outputs of the
// mlx-community bf16 layout of the same weights.
func TestPublishedLayouts(t *testing.T) {
	for name, mk := range backends() {
		if name == "plain" {
			continue // the reference kernels add nothing to a naming test
		}
		b := mk()
		t.Run(name, func(t *testing.T) { publishedLayouts(t, b) })
		b.Close()
	}
}

func publishedLayouts(t *testing.T, b tensor.Backend) {
	for _, f := range publishedFamilies {
		outputs := map[string][]float32{}
		for _, lc := range layoutCases {
			t.Run(f.family+"/"+lc.name, func(t *testing.T) {
				repo := f.mlx
				if lc.opt.Layout == synth.LayoutHF {
					repo = f.google
				}
				if d, ok := b.(interface{ Device() string }); ok && d.Device() == "cpu" && f.family == "26B-A4B" && lc.opt.Bits == 0 {
					t.Skip("MLX's CPU GatherMM takes float32 only: bf16 experts run on the Metal GPU or the Go backend")
				}
				opt := lc.opt
				opt.Seed, opt.Scale = 11, 0.2
				outputs[lc.name] = layoutRun(t, b, t.TempDir(), shrunkConfig(t, repo, f.layers), opt)
			})
		}
		if hf, mlx := outputs["google-bf16"], outputs["mlx-bf16"]; hf != nil && mlx != nil {
			checkClose(t, f.family+" google/* vs mlx-community bf16", hf, mlx, 0)
		}
	}
}

// layoutRun writes a synthetic checkpoint of config into dir, loads it
// with every tensor used and both towers, generates and runs the towers;
// it returns every output.
func layoutRun(t testing.TB, b tensor.Backend, dir string, config []byte, opt synth.Options) []float32 {
	t.Helper()
	if err := synth.Write(dir, config, opt); err != nil {
		t.Fatal(err)
	}
	m, err := gemma4.Load(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.Unknown) != 0 {
		t.Fatalf("tensors the model did not use: %v", m.Unknown)
	}
	if m.Vision == nil || (m.Cfg.Audio != nil) != (m.Audio != nil) {
		t.Fatalf("towers: vision %v, audio %v", m.Vision != nil, m.Audio != nil)
	}
	out := generate(t, b, m)
	return append(out, towerOutputs(t, b, m)...)
}

// generate decodes 6 tokens greedily after a 9-token prompt, checks the
// last step against a fresh prefill of the whole sequence and logs the
// tokens; it returns the logits of every step.
func generate(t testing.TB, b tensor.Backend, m *gemma4.Model) []float32 {
	t.Helper()
	seq := []int32{2, 105, 17, 44, 301, 9, 77, 106, 3}
	caches := m.Text.NewCaches()
	logits := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq), LastOnly: true}, caches)))
	var all []float32
	for step := 0; step < 6; step++ {
		finite(t, fmt.Sprintf("step %d", step), logits)
		all = append(all, logits...)
		next := argmax(logits)
		seq = append(seq, next)
		logits = must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, []int32{next})}, caches)))
	}
	fresh := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq), LastOnly: true}, []kvcache.Cache(m.Text.NewCaches()))))
	checkClose(t, "decode vs prefill", logits, fresh, 1e-3)
	t.Logf("%d layers, vocabulary %d: generated %v after the 9-token prompt", m.Cfg.Text.NumHiddenLayers, len(logits), seq[9:])
	return all
}

// towerOutputs encodes a small random image (and audio clip, where the
// model has audio) through the towers.
func towerOutputs(t testing.TB, b tensor.Backend, m *gemma4.Model) []float32 {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 5))
	vc := m.Cfg.Vision
	side, pd := 6, 3*vc.PatchPixels()*vc.PatchPixels()
	if vc.Unified() {
		side = 2
	}
	p := &gemma4.Patches{N: side * side, Data: make([]float32, side*side*pd)}
	for i := range p.Data {
		p.Data[i] = r.Float32()
	}
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			p.Positions = append(p.Positions, [2]int32{int32(x), int32(y)})
		}
	}
	img, err := m.Vision.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	out := must(b.Float32s(b.AsType(img, tensor.Float32)))
	finite(t, "image", out)
	if m.Audio == nil {
		return out
	}
	var feats tensor.Tensor
	if m.Cfg.Audio.Unified() {
		wave := make([]float32, 2*m.Cfg.Audio.AudioSamplesPerToken)
		for i := range wave {
			wave[i] = r.Float32() - 0.5
		}
		feats, err = m.Audio.EncodeWaveform(wave)
	} else {
		const frames = 48
		mel := make([]float32, frames*128)
		for i := range mel {
			mel[i] = r.Float32()
		}
		valid := make([]bool, frames)
		for i := range valid {
			valid[i] = true
		}
		feats, _, err = m.Audio.Encode(b.FromFloat32(mel, []int{1, frames, 128}, tensor.Float32), valid)
	}
	if err != nil {
		t.Fatal(err)
	}
	a := must(b.Float32s(b.AsType(feats, tensor.Float32)))
	finite(t, "audio", a)
	return append(out, a...)
}

func finite(t testing.TB, what string, v []float32) {
	t.Helper()
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("%s: value %d is %v", what, i, x)
		}
	}
}
