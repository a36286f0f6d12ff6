package train

import (
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
