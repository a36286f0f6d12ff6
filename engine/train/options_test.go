package train

import (
	"math"
	"strings"
	"testing"

	"perch/engine/gocpu"
)

// TestLoRAPlusPolicy: one policy for every method — a ratio that is not
// finite or is below 1 is refused before anything runs, 0 means 1, and the
// optimizer checks its leaves against the targets.
func TestLoRAPlusPolicy(t *testing.T) {
	for _, m := range []Method{SFT, DPO, ORPO} {
		for _, r := range []float64{math.NaN(), math.Inf(1), 0.5, -2} {
			_, err := Options{Method: m, LoRAPlusRatio: r}.withDefaults()
			if err == nil || !strings.Contains(err.Error(), "LoRA+ ratio") {
				t.Fatalf("%s ratio %v: %v", m, r, err)
			}
		}
		o, err := Options{Method: m}.withDefaults()
		if err != nil || o.LoRAPlusRatio != 1 {
			t.Fatalf("%s: default ratio %v, %v", m, o.LoRAPlusRatio, err)
		}
	}
	for _, bad := range []Options{{LearningRate: -1}, {GradClip: math.NaN()}, {Method: "ppo"}, {Schedule: Schedule{Name: "cosine"}}, {Schedule: Schedule{Name: "step"}}} {
		if _, err := bad.withDefaults(); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
	if _, err := newAdamW([]string{"x.lora_a", "x.lora_b", "y.lora_a"}, []int{1, 1, 1}, 2, 1, 0); err == nil || !strings.Contains(err.Error(), "3 leaves") {
		t.Fatalf("leaf count: %v", err)
	}
	if _, err := newAdamW([]string{"x.lora_a", "x.weight"}, []int{1, 1}, 1, 1, 0); err == nil {
		t.Fatal("a leaf that is neither A nor B was accepted")
	}
	// The trainer refuses a bad ratio too (with a model at hand).
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	if _, err := NewTrainer(fx.b, fx.m, fx.ad, Options{LoRAPlusRatio: 0.9}); err == nil {
		t.Fatal("NewTrainer accepted ratio 0.9")
	}
}

// TestSchedule: MLX's schedulers as mlx-lm joins them — linear warmup from
// WarmupInit reaching the peak at update Warmup, then the cosine decay from
// update Warmup+1.
func TestSchedule(t *testing.T) {
	s := Schedule{Name: "cosine", Warmup: 4, WarmupInit: 0, DecaySteps: 10, End: 1e-5}
	want := map[int]float64{0: 0, 2: 5e-4, 4: 1e-3, 5: 1e-3, 10: 1e-5 + 0.5*(1+math.Cos(math.Pi*5/10))*(1e-3-1e-5), 15: 1e-5, 100: 1e-5}
	for k, w := range want {
		if got := s.LR(1e-3, k); math.Abs(got-w) > 1e-12 {
			t.Fatalf("LR(%d) = %v, want %v", k, got, w)
		}
	}
	if got := (Schedule{}).LR(3e-4, 7); got != 3e-4 {
		t.Fatalf("constant: %v", got)
	}
}

// TestDropout: with LoRA dropout the recomputed backward sees the masks
// its forward saw (recompute = no recompute), training forwards differ from
// evaluation (no dropout), and masks differ between steps.
func TestDropout(t *testing.T) {
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	fx.ad.Config.LoRA.Dropout = 0.3
	rows := fx.sftRows()
	var g [2][][]float32
	var loss [2]float64
	for i, nr := range []bool{false, true} {
		tr := fx.trainer(Options{NoRecompute: nr, Seed: 7})
		m, grads, err := tr.run(rows, true)
		if err != nil {
			t.Fatal(err)
		}
		g[i], loss[i] = grads, m.Loss
	}
	for i := range g[0] {
		for j := range g[0][i] {
			if math.Abs(float64(g[0][i][j]-g[1][i][j])) > 1e-5*math.Max(1, math.Abs(float64(g[0][i][j]))) {
				t.Fatalf("dropout: recompute and no-recompute differ at %d[%d]", i, j)
			}
		}
	}
	tr := fx.trainer(Options{Seed: 7})
	ev, err := tr.Evaluate(rows)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ev.Loss-fx.scalar("sft.loss")) > 1e-4 || math.Abs(loss[0]-ev.Loss) < 1e-3 {
		t.Fatalf("evaluation %v (golden without dropout %v), training forward %v", ev.Loss, fx.scalar("sft.loss"), loss[0])
	}
	m1, _, _ := tr.run(rows, true)
	m2, _, _ := tr.run(rows, true)
	if m1.Loss == m2.Loss {
		t.Fatal("two steps drew the same dropout masks")
	}
}

// TestBadRows: rows the step cannot use are refused, naming the row,
// before any work.
func TestBadRows(t *testing.T) {
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	sft := fx.trainer(Options{})
	pref := fx.trainer(Options{Method: DPO})
	for _, c := range []struct {
		tr   *Trainer
		rows []Row
		want string
	}{
		{sft, nil, "empty batch"},
		{sft, []Row{{IDs: []int32{2, 5}, PromptLen: 2, Source: "a.jsonl:3"}}, "a.jsonl:3: an SFT row needs"},
		{sft, []Row{{IDs: []int32{2, 5, 99999}, PromptLen: 1, Source: "a.jsonl:4"}}, "a.jsonl:4: token id 99999"},
		{pref, []Row{{Prompt: []int32{2}, Chosen: []int32{5}, Source: "p.jsonl:1"}}, "p.jsonl:1: a preference row needs"},
	} {
		if _, err := c.tr.Step(c.rows); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v", c.want, err)
		}
	}
	if sft.Steps() != 0 {
		t.Fatal("a refused batch counted as a step")
	}
}
