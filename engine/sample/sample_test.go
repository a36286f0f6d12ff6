package sample

import (
	"math"
	"testing"

	"perch/engine/gocpu"
	"perch/engine/tensor"
)

func draw(t *testing.T, p Params, logits []float32, n int, suppress ...int32) map[int32]int {
	t.Helper()
	b := gocpu.New(gocpu.Options{})
	s := New(b, p, len(logits), suppress)
	x := b.FromFloat32(logits, []int{1, len(logits)}, tensor.Float32)
	counts := map[int32]int{}
	for i := 0; i < n; i++ {
		ids, err := b.Int32s(s.Sample(x, nil))
		if err != nil {
			t.Fatal(err)
		}
		counts[ids[0]]++
	}
	return counts
}

func logits(probs ...float64) []float32 {
	out := make([]float32, len(probs))
	for i, p := range probs {
		out[i] = float32(math.Log(p))
	}
	return out
}

func TestGreedy(t *testing.T) {
	c := draw(t, Params{}, []float32{1, 3, 2, 3}, 3)
	if c[1] != 3 {
		t.Fatalf("greedy picked %v, want the first maximum (1) every time", c)
	}
	if c := draw(t, Params{}, []float32{1, 3, 2, 3}, 1, 1); c[3] != 1 {
		t.Fatalf("with 1 suppressed greedy picked %v, want 3", c)
	}
}

func TestTopKTopPMinP(t *testing.T) {
	l := logits(0.5, 0.3, 0.15, 0.05)
	cases := []struct {
		name    string
		p       Params
		allowed map[int32]bool
	}{
		{"top-k 2", Params{Temperature: 1, TopK: 2, Seed: 1}, map[int32]bool{0: true, 1: true}},
		// ascending cumulative: .05 .20 .50 1.0; keep > 1-0.6=0.4 -> tokens 1 and 0
		{"top-p 0.6", Params{Temperature: 1, TopP: 0.6, Seed: 2}, map[int32]bool{0: true, 1: true}},
		// min-p 0.5 keeps p >= 0.25
		{"min-p 0.5", Params{Temperature: 1, MinP: 0.5, Seed: 3}, map[int32]bool{0: true, 1: true}},
	}
	for _, c := range cases {
		got := draw(t, c.p, l, 400)
		for id, n := range got {
			if !c.allowed[id] {
				t.Errorf("%s: drew %d (%d times); allowed %v", c.name, id, n, c.allowed)
			}
		}
		if len(got) < 2 {
			t.Errorf("%s: only drew %v from two allowed tokens", c.name, got)
		}
	}
}

func TestTemperatureDistributionAndSeed(t *testing.T) {
	l := logits(0.6, 0.3, 0.1)
	got := draw(t, Params{Temperature: 1, Seed: 7}, l, 3000)
	for id, want := range map[int32]float64{0: 0.6, 1: 0.3, 2: 0.1} {
		if f := float64(got[id]) / 3000; math.Abs(f-want) > 0.04 {
			t.Errorf("token %d drawn with frequency %.3f, want about %.1f", id, f, want)
		}
	}
	again := draw(t, Params{Temperature: 1, Seed: 7}, l, 3000)
	for id := range got {
		if got[id] != again[id] {
			t.Fatalf("same seed gave %v then %v", got, again)
		}
	}
}

func TestRepetitionPenalty(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	s := New(b, Params{RepetitionPenalty: 2}, 3, nil)
	x := b.FromFloat32([]float32{2, 1.5, -1}, []int{1, 3}, tensor.Float32)
	ids, err := b.Int32s(s.Sample(x, []int32{0}))
	if err != nil || ids[0] != 1 {
		t.Fatalf("penalized 0 (2 -> 1) should let 1 (1.5) win: got %v %v", ids, err)
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Params{{Temperature: -1}, {TopP: 1.5}, {MinP: -0.1}, {TopK: -2}, {RepetitionPenalty: -1}} {
		if p.Validate(10) == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}
