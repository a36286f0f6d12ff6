package train

import "testing"

func TestCPOCoefficientsAreItsDerivatives(t *testing.T) {
	for _, p := range []map[string]float64{nil, {"beta": 1, "alpha": 0}, {"beta": 0.05, "alpha": 3}} {
		worst := checkCoefficients(t, CPO, Options{Params: p}, 0)
		t.Logf("params %v: worst relative error %.2g", p, worst)
	}
}

func TestCPOMatchesOracle(t *testing.T) {
	fx, o, rows, grads := crossCheck(t, CPO)
	worst := fdCheck(t, fx.b, fx.m, fx.ad, o, rows, grads, fx.trainer(o).names)
	t.Logf("finite differences: worst |FD - AD| %.2g", worst)
}
