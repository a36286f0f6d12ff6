package train

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// TestFamilies: on each backend, on a tiny synthetic checkpoint of every Gemma-4 family
// (E2B-style text-tiny, E4B, 12B, 26B-A4B MoE, 31B), dense and 4-bit, the
// trainer's gradient matches central finite differences of its own loss on
// the largest entries, recompute and no-recompute agree, and a step lowers
// the loss. Finite differences: h = 1e-3 on one leaf entry, the loss
// (float32 log-probabilities summed in float64) evaluated by Evaluate;
// tolerance 2e-2·|AD| + 2e-3 (the loss's float32 noise over 2h).
func TestFamilies(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	families := []string{"e2b"}
	for name := range synth.Families {
		families = append(families, name)
	}
	sort.Strings(families)
	rows := []Row{{IDs: []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448}, PromptLen: 4, Source: "row"}}
	for _, bc := range goldenBackends() {
		if bc.name != "go-plain" {
			t.Run(bc.name, func(t *testing.T) { familySteps(t, bc.make(t), raw, families, rows) })
		}
	}
}

func familySteps(t *testing.T, b tensor.Backend, raw []byte, families []string, rows []Row) {
	var err error
	for _, name := range families {
		for _, bits := range []int{0, 4} {
			cfg := raw
			if name != "e2b" {
				if cfg, err = synth.FamilyConfig(raw, name); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			if err := synth.Write(dir, cfg, synth.Options{Bits: bits, Seed: 5, Scale: 0.2}); err != nil {
				t.Fatal(err)
			}
			m, err := gemma4.Load(b, dir)
			if err != nil {
				t.Fatalf("%s %d-bit: %v", name, bits, err)
			}
			ad := randomAdapter(t, m, 4)
			grads := map[bool][][]float32{}
			var tr *Trainer
			for _, nr := range []bool{false, true} {
				tr, err = NewTrainer(b, m, ad, Options{Method: SFT, NoRecompute: nr})
				if err != nil {
					t.Fatal(err)
				}
				if _, grads[nr], err = tr.run(rows, true); err != nil {
					t.Fatalf("%s %d-bit: %v", name, bits, err)
				}
				tr.Close()
			}
			gmax := 0.0
			for i := range grads[false] {
				for j, g := range grads[false][i] {
					gmax = math.Max(gmax, math.Abs(float64(g)))
					if d := math.Abs(float64(g - grads[true][i][j])); d > 1e-5*math.Max(1, math.Abs(float64(g))) {
						t.Fatalf("%s %d-bit: recompute and no-recompute differ at %s[%d]: %v vs %v", name, bits, tr.names[i], j, g, grads[true][i][j])
					}
				}
			}
			worst := fdCheck(t, b, m, ad, Options{Method: SFT}, rows, grads[false], tr.names)
			// A step at a moderate rate lowers the loss.
			tr, err = NewTrainer(b, m, ad, Options{Method: SFT, LearningRate: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			m0, err := tr.Step(rows)
			if err != nil {
				t.Fatal(err)
			}
			m1, err := tr.Evaluate(rows)
			if err != nil {
				t.Fatal(err)
			}
			if !(m1.Loss < m0.Loss) {
				t.Fatalf("%s %d-bit: loss %v after a step, %v before", name, bits, m1.Loss, m0.Loss)
			}
			tr.Close()
			t.Logf("%s %d-bit: %d leaves, max|grad| %.3g, FD worst |FD-AD| %.2g; loss %.4f -> %.4f after one step",
				name, bits, len(tr.names), gmax, worst, m0.Loss, m1.Loss)
			m.Close()
			b.Sweep()
		}
	}
}

// randomAdapter is the default targets at rank r with non-zero lora_b (so
// that every leaf has a gradient).
func randomAdapter(t *testing.T, m *gemma4.Model, r int) *lora.Adapter {
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank, cfg.LoRA.Scale = r, 2
	ad, err := lora.New(cfg, m, 9)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range ad.Names() {
		if l := ad.Leaves[n]; n[len(n)-1] == 'b' {
			for i := range l.Data {
				l.Data[i] = float32(0.05 * rng.NormFloat64())
			}
		}
	}
	return ad
}

// fdStep is fdCheck's step on a leaf entry.
var fdStep = 1e-3

// fdCheck compares the 6 largest gradient entries (away from router
// ties) with central differences of o's loss and returns the worst
// |FD − AD|.
func fdCheck(t *testing.T, b tensor.Backend, m *gemma4.Model, ad *lora.Adapter, o Options, rows []Row, grads [][]float32, names []string) float64 {
	type entry struct {
		leaf, j int
		g       float64
	}
	var es []entry
	for i := range grads {
		for j, g := range grads[i] {
			es = append(es, entry{i, j, float64(g)})
		}
	}
	sort.Slice(es, func(a, c int) bool { return math.Abs(es[a].g) > math.Abs(es[c].g) })
	loss := func() float64 {
		tr, err := NewTrainer(b, m, ad, o)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		mt, err := tr.Evaluate(rows)
		if err != nil {
			t.Fatal(err)
		}
		return mt.Loss
	}
	h := fdStep
	var worst float64
	f0 := loss()
	checked := 0
	for _, e := range es {
		if checked == 6 {
			break
		}
		v := ad.Leaves[names[e.leaf]].Data
		x := v[e.j]
		v[e.j] = x + float32(h)
		fp := loss()
		v[e.j] = x - float32(h)
		fm := loss()
		v[e.j] = x
		// A router's top-k choice flipping within ±h (MoE) makes the loss
		// jump: the one-sided slopes then disagree; such an entry is skipped.
		if d1, d2 := (fp-f0)/h, (f0-fm)/h; math.Abs(d1-d2) > 0.2*math.Abs(d1+d2)/2+0.05 {
			continue
		}
		fd := (fp - fm) / (2 * h)
		d := math.Abs(fd - e.g)
		if d > 2e-2*math.Abs(e.g)+2e-3 {
			t.Fatalf("%s[%d]: FD %v, AD %v", names[e.leaf], e.j, fd, e.g)
		}
		worst = math.Max(worst, d)
		checked++
	}
	if checked < 6 {
		t.Fatalf("only %d entries away from a router tie", checked)
	}
	return worst
}

// TestBF16Step: on the bf16 fixture (bf16 activations on MLX; the Go
// backend computes in float32) a few steps lower the loss, and recompute
// and no-recompute agree to bf16 precision.
func TestBF16Step(t *testing.T) {
	rows := []Row{{IDs: []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448}, PromptLen: 4, Source: "row"}}
	for _, bc := range goldenBackends() {
		if bc.name == "go-plain" {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			b := bc.make(t)
			m, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny-bf16"))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ad := randomAdapter(t, m, 4)
			var g [2][][]float32
			for i, nr := range []bool{false, true} {
				tr, err := NewTrainer(b, m, ad, Options{NoRecompute: nr})
				if err != nil {
					t.Fatal(err)
				}
				if _, g[i], err = tr.run(rows, true); err != nil {
					t.Fatal(err)
				}
				tr.Close()
			}
			var gmax, dmax float64
			for i := range g[0] {
				for j := range g[0][i] {
					gmax = math.Max(gmax, math.Abs(float64(g[0][i][j])))
					dmax = math.Max(dmax, math.Abs(float64(g[0][i][j]-g[1][i][j])))
				}
			}
			if dmax > 2e-2*gmax {
				t.Fatalf("recompute and no-recompute differ by %v (max |grad| %v)", dmax, gmax)
			}
			tr, err := NewTrainer(b, m, ad, Options{LearningRate: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			first, err := tr.Step(rows)
			if err != nil {
				t.Fatal(err)
			}
			var last StepMetrics
			for k := 0; k < 3; k++ {
				if last, err = tr.Step(rows); err != nil {
					t.Fatal(err)
				}
			}
			if !(last.Loss < first.Loss) || math.IsNaN(last.Loss) {
				t.Fatalf("loss %v after 4 steps, %v before", last.Loss, first.Loss)
			}
			t.Logf("bf16: loss %.4f -> %.4f; recompute vs no-recompute max |diff| %.2g of max |grad| %.2g", first.Loss, last.Loss, dmax, gmax)
		})
	}
}
