package train

import (
	"slices"
	"strings"
	"testing"
)

func TestKTOCoefficientsAreItsDerivatives(t *testing.T) {
	for _, c := range []struct {
		p     map[string]float64
		batch float64
	}{{nil, 0}, {map[string]float64{"beta": 1, "desirable_weight": 1.33, "undesirable_weight": 0.5}, 0.7}, {map[string]float64{"beta": 5}, 2}} {
		worst := checkCoefficients(t, KTO, Options{Params: c.p}, c.batch)
		t.Logf("params %v, reference point %g: worst relative error %.2g", c.p, c.batch, worst)
	}
}

// TestKTOMatchesOracle: loss, reference point and gradient against the
// float64 PyTorch oracle (the reference point from the batch's shifted
// completions, no gradient through it), and the gradient against finite
// differences of the trainer's own loss.
func TestKTOMatchesOracle(t *testing.T) {
	fx, o, rows, grads := crossCheck(t, KTO)
	m, err := fx.trainer(o).Evaluate(rows)
	if err != nil {
		t.Fatal(err)
	}
	z0 := m.Term("kl")
	if !(z0 > 0) {
		t.Fatalf("the oracle's batch has reference point %v: the check wants one above the clamp", z0)
	}
	o.heldBatch = &z0 // the gradient does not flow through the reference point
	// The log-ratios bend fast along the largest entries (at h 1e-3 the
	// differences miss by 2.5%; at 1e-4 they agree to 2e-4).
	fdStep = 1e-4
	defer func() { fdStep = 1e-3 }()
	worst := fdCheck(t, fx.b, fx.m, fx.ad, o, rows, grads, fx.trainer(o).names)
	t.Logf("finite differences: worst |FD - AD| %.2g", worst)
}

// TRL's unpaired rows encode as the prompt and completion a chat request
// and its answer render; other shapes are refused for kto.
func TestKTORows(t *testing.T) {
	enc := tinyEncoder(t, KTO)
	good := encodeOne(t, enc, `{"prompt": "Name a bird.", "completion": "A robin.", "label": true}`)
	bad := encodeOne(t, enc, `{"prompt": [{"role": "user", "content": "Name a bird."}], "completion": [{"role": "assistant", "content": "A robin."}], "label": false}`)
	if !good.Label || bad.Label || !slices.Equal(good.Prompt, bad.Prompt) || !slices.Equal(good.Chosen, bad.Chosen) || good.Rejected != nil {
		t.Fatalf("string and message forms: %+v %+v", good, bad)
	}
	if c := enc.Tok.Decode(good.Chosen, false); c != "A robin.<turn|>\n" {
		t.Errorf("completion %q", c)
	}
	for _, line := range []string{`{"prompt": "a", "completion": "b"}`, `{"prompt": "a", "completion": "b", "label": "yes"}`, `{"prompt": "a", "chosen": "b", "rejected": "c"}`} {
		if _, _, _, err := enc.Encode(t.Context(), []byte(line)); err == nil || !strings.Contains(err.Error(), "label") {
			t.Errorf("%s: error %v, want one naming the label", line, err)
		}
	}
	if _, _, _, err := tinyEncoder(t, DPO).Encode(t.Context(), []byte(`{"prompt": "a", "completion": "b", "label": true}`)); err == nil || !strings.Contains(err.Error(), "kto") {
		t.Errorf("dpo on a KTO row: %v", err)
	}
}
