package lora_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gocpu"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// TestFuseDense: the fixture's adapter fused into text-tiny gives the
// golden adapter logits without an adapter attached (README: within
// 6.77e-05 in MLX), and the folder is complete.
func TestFuseDense(t *testing.T) {
	ad, err := lora.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "fused")
	b := gocpu.New(gocpu.Options{})
	base, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	n, err := lora.FuseDir(filepath.Join(testdata, "models", "text-tiny"), dst, ad, lora.FuseOptions{Text: base.Text})
	if err != nil {
		t.Fatal(err)
	}
	if n != 38 {
		t.Fatalf("%d projections fused, want 38", n)
	}
	m, err := gemma4.Load(b, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := goldenFile(t)
	ids := must(g.I32("forward.input_ids"))
	got := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(ids, []int{1, len(ids)})}, nil)))
	compare(t, "fused forward vs forward.logits", got, must(g.F32("forward.logits")), 2e-4)
	if _, err := lora.FuseDir(filepath.Join(testdata, "models", "text-tiny"), dst, ad, lora.FuseOptions{Text: base.Text}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("fusing over an existing folder: %v", err)
	}
}

// TestFuseQuantized: into the 4-bit fixture. Requantized (the default):
// the fused model stays 4-bit with every tensor used, and each fused weight
// is within 1.5 quantization steps of base + delta (MLX's affine
// quantization: half a step, up to one more at a group's far end).
// Dequantized: the fused projections are dense, config.json says so, and
// the logits are the adapter's.
func TestFuseQuantized(t *testing.T) {
	base := filepath.Join(testdata, "models", "text-tiny-q4")
	b := gocpu.New(gocpu.Options{})
	m, err := gemma4.Load(b, base)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank, cfg.LoRA.Scale = 4, 2
	ad, err := lora.New(cfg, m, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for n, l := range ad.Leaves {
		if strings.HasSuffix(n, ".lora_b") {
			for i := range l.Data {
				l.Data[i] = float32(0.2 * rng.NormFloat64())
			}
		}
	}
	ids := []int32{2, 485, 494, 539, 301, 688, 630, 971}
	in := gemma4.Inputs{IDs: b.FromInt32(ids, []int{1, len(ids)})}
	x, err := lora.Attach(b, m, ad)
	if err != nil {
		t.Fatal(err)
	}
	withAdapter := must(b.Float32s(m.Text.Forward(in, nil)))
	x.Detach()
	for _, deq := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "fused")
		if _, err := lora.FuseDir(base, dst, ad, lora.FuseOptions{Dequantize: deq, Text: m.Text}); err != nil {
			t.Fatal(err)
		}
		fm, err := gemma4.Load(b, dst)
		if err != nil {
			t.Fatal(err)
		}
		q := fm.Text.Layers[0].SelfAttn.QProj
		if len(fm.Unknown) != 0 || q.Quantized() == deq || !fm.Text.Layers[0].SelfAttn.QNorm.DType().IsFloat() {
			t.Fatalf("dequantize %v: unknown %v, q_proj quantized %v", deq, fm.Unknown, q.Quantized())
		}
		if deq {
			compare(t, "dequantized fuse vs the adapter", must(b.Float32s(fm.Text.Forward(in, nil))), withAdapter, 2e-4)
			fm.Close()
			continue
		}
		ts, err := lora.Targets(m.Text, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ft, _ := lora.Targets(fm.Text, cfg)
		var worst float64
		for i, tg := range ts {
			want := weights(t, b, tg.Linear)
			d := lora.Delta(ad.Leaves[tg.A()], ad.Leaves[tg.B()], cfg.LoRA.Scale)
			got := weights(t, b, ft[i].Linear)
			sc := must(b.Float32s(ft[i].Linear.Scales))
			groups := tg.Linear.In / tg.Linear.GroupSize
			for j := range got {
				step := math.Abs(float64(sc[j/tg.Linear.In*groups+j%tg.Linear.In/tg.Linear.GroupSize]))
				e := math.Abs(float64(got[j]-want[j]-d[j])) / step
				if e > 1.5+1e-4 {
					t.Fatalf("%s[%d]: fused %v, base + delta %v (step %v)", tg.Key, j, got[j], want[j]+d[j], step)
				}
				worst = math.Max(worst, e)
			}
		}
		t.Logf("requantized: worst |fused - (base + delta)| = %.2f steps", worst)
		fm.Close()
	}
}

// weights reads a Linear's [Out, In] weights back as LinearT of the identity.
func weights(t *testing.T, b tensor.Backend, l *tensor.Linear) []float32 {
	eye := make([]float32, l.Out*l.Out)
	for i := 0; i < l.Out; i++ {
		eye[i*l.Out+i] = 1
	}
	return must(b.Float32s(b.LinearT(b.FromFloat32(eye, []int{l.Out, l.Out}, tensor.Float32), l)))
}
