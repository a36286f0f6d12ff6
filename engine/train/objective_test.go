package train

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gocpu"
)

// The checks every method's tests run: its coefficients are its loss's
// derivatives, the trainer's gradient matches finite differences of its
// loss, and loss and gradient match a float64 PyTorch oracle
// (bench/methods_torch.py → testdata/goldens/methods-tiny/golden.json).

// checkCoefficients compares Loss's coefficients with central differences
// of Loss in each sequence sum (float64: 1e-6 relative), over random
// groups of the method's shape, and returns the worst relative error.
func checkCoefficients(t *testing.T, m Method, o Options, batch float64) float64 {
	t.Helper()
	obj, err := ObjectiveOf(m)
	if err != nil {
		t.Fatal(err)
	}
	o.Method = m
	nseq := map[RowKind]int{RowsSFT: 1, RowsPairs: 2, RowsUnpaired: 1}[obj.Rows()]
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for trial := 0; trial < 50; trial++ {
		g := Group{Groups: 3, Counted: 40, Batch: batch, Opts: o, Label: trial%2 == 0}
		for k := 0; k < nseq; k++ {
			n := 1 + rng.IntN(12)
			g.Tokens = append(g.Tokens, n)
			g.Sums = append(g.Sums, -float64(n)*(0.05+3*rng.Float64()))
			g.Refs = append(g.Refs, -float64(n)*(0.05+3*rng.Float64()))
		}
		vals := make([]float64, len(obj.Metrics()))
		_, coeffs := obj.Loss(g, vals)
		for k := range g.Sums {
			const h = 1e-5
			x := g.Sums[k]
			g.Sums[k] = x + h
			lp, _ := obj.Loss(g, vals)
			g.Sums[k] = x - h
			lm, _ := obj.Loss(g, vals)
			g.Sums[k] = x
			fd := (lp - lm) / (2 * h)
			rel := math.Abs(fd-coeffs[k]) / math.Max(math.Abs(fd), 1e-6)
			if rel > 1e-6 && math.Abs(fd-coeffs[k]) > 1e-10 {
				t.Fatalf("%s sequence %d of %+v: coefficient %v, finite difference %v", m, k, g, coeffs[k], fd)
			}
			worst = math.Max(worst, rel)
		}
	}
	return worst
}

// methodsGolden is the oracle's file.
type methodsGolden struct {
	Pairs []struct {
		Prompt, Chosen, Rejected []int32
	}
	Unpaired []struct {
		Prompt, Completion []int32
		Label              bool
	}
	Methods map[string]struct {
		Params   map[string]float64
		Loss     float64
		Metrics  map[string]float64
		GradNorm float64 `json:"grad_norm"`
		GradTop  []struct {
			Leaf  string
			Index int
			Value float64
		} `json:"grad_top"`
	}
}

func readMethodsGolden(t *testing.T) *methodsGolden {
	raw, err := os.ReadFile(filepath.Join(testdata, "goldens", "methods-tiny", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := &methodsGolden{}
	if err := json.Unmarshal(raw, g); err != nil {
		t.Fatal(err)
	}
	return g
}

// goldenRows are the oracle's batch for a row shape.
func (g *methodsGolden) rows(kind RowKind) []Row {
	var rows []Row
	for _, p := range g.Pairs {
		if kind == RowsPairs {
			rows = append(rows, Row{Prompt: p.Prompt, Chosen: p.Chosen, Rejected: p.Rejected, Source: "golden pair"})
		}
	}
	for _, u := range g.Unpaired {
		if kind == RowsUnpaired {
			rows = append(rows, Row{Prompt: u.Prompt, Chosen: u.Completion, Label: u.Label, Source: "golden row"})
		}
	}
	return rows
}

// crossCheck runs method m with the oracle's settings on the lora-tiny
// fixture (Go backend, float32) and compares the loss (1e-4 relative), the
// named metrics (1e-4 + 1e-4 relative), the gradient's global norm (1e-3
// relative) and its 40 largest entries (1e-3 of the largest) with the
// float64 oracle. It returns the options, the rows and the gradient for
// the method's other checks.
func crossCheck(t *testing.T, m Method) (*fixture, Options, []Row, [][]float32) {
	t.Helper()
	g := readMethodsGolden(t)
	want, ok := g.Methods[string(m)]
	if !ok {
		t.Fatalf("the oracle has no %s", m)
	}
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	o := Options{Method: m, Params: want.Params}
	rows := g.rows(m.Rows())
	tr := fx.trainer(o)
	mt, grads, err := tr.run(rows, true)
	if err != nil {
		t.Fatal(err)
	}
	near(t, string(m)+" loss", mt.Loss, want.Loss, 1e-4*math.Max(1, math.Abs(want.Loss)))
	for k, v := range want.Metrics {
		near(t, string(m)+" "+k, mt.Term(k), v, 1e-4+1e-4*math.Abs(v))
	}
	norm := globalNorm(grads)
	if math.Abs(norm/want.GradNorm-1) > 1e-3 {
		t.Fatalf("%s gradient norm %v, oracle %v", m, norm, want.GradNorm)
	}
	index := map[string]int{}
	for i, n := range tr.names {
		index[n] = i
	}
	gmax, worst := math.Abs(want.GradTop[0].Value), 0.0
	for _, e := range want.GradTop {
		i, ok := index[e.Leaf]
		if !ok {
			t.Fatalf("the oracle's leaf %s is not the trainer's", e.Leaf)
		}
		d := math.Abs(float64(grads[i][e.Index]) - e.Value)
		if d > 1e-3*gmax {
			t.Fatalf("%s ∂loss/∂%s[%d] = %v, oracle %v", m, e.Leaf, e.Index, grads[i][e.Index], e.Value)
		}
		worst = math.Max(worst, d)
	}
	t.Logf("%s vs the float64 oracle: loss %.6f (oracle %.6f), grad norm %.5f (%.5f), top-40 entries within %.2g of max %.3g",
		m, mt.Loss, want.Loss, norm, want.GradNorm, worst, gmax)
	return fx, o, rows, grads
}
