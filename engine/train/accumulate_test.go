package train

import (
	"math"
	"testing"

	"perch/engine/gocpu"
)

// Two micro-batches give the mean of their gradients and losses.
func TestGradAccumulationIsTheMeanOfMicroBatches(t *testing.T) {
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	rows := fx.sftRows()
	tr := fx.trainer(Options{Method: SFT, GradAccumulation: 2})
	m, got, err := tr.stepGrads(rows)
	if err != nil {
		t.Fatal(err)
	}
	var want [][]float32
	var loss float64
	for _, r := range rows {
		mk, g, err := fx.trainer(Options{Method: SFT}).run([]Row{r}, true)
		if err != nil {
			t.Fatal(err)
		}
		loss += mk.Loss / 2
		if want == nil {
			want = make([][]float32, len(g))
			for i := range g {
				want[i] = make([]float32, len(g[i]))
			}
		}
		for i := range g {
			for j, v := range g[i] {
				want[i][j] += v / 2
			}
		}
	}
	near(t, "loss", m.Loss, loss, 1e-6)
	var worst, gmax float64
	for i := range want {
		for j := range want[i] {
			worst = math.Max(worst, math.Abs(float64(got[i][j]-want[i][j])))
			gmax = math.Max(gmax, math.Abs(float64(want[i][j])))
		}
	}
	if worst > 1e-6*gmax {
		t.Fatalf("accumulated gradient off by %v (max %v)", worst, gmax)
	}
	whole, _, err := fx.trainer(Options{Method: SFT}).run(rows, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2 micro-batches: loss %.6f (mean of the rows' losses %.6f; one batch of both %.6f, token-weighted)", m.Loss, loss, whole.Loss)
}
