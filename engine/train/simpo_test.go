package train

import "testing"

func TestSimPOCoefficientsAreItsDerivatives(t *testing.T) {
	for _, p := range []map[string]float64{nil, {"beta": 0.5, "gamma": 0}, {"beta": 10, "gamma": 3}} {
		worst := checkCoefficients(t, SimPO, Options{Params: p}, 0)
		t.Logf("params %v: worst relative error %.2g", p, worst)
	}
}

// TestSimPOMatchesOracle: loss, margin and gradient against the float64
// PyTorch oracle, and the gradient against finite differences of the
// trainer's own loss.
func TestSimPOMatchesOracle(t *testing.T) {
	fx, o, rows, grads := crossCheck(t, SimPO)
	tr := fx.trainer(o)
	worst := fdCheck(t, fx.b, fx.m, fx.ad, o, rows, grads, tr.names)
	t.Logf("finite differences: worst |FD - AD| %.2g", worst)
}
