package autodiff_test

import (
	"strings"
	"testing"

	"perch/engine/autodiff"
	"perch/engine/gocpu"
	"perch/engine/tensor"
)

// TestNoGradient: a parameter reaching an op without a gradient fails the
// tape with the op's name; constants pass through such ops untouched.
func TestNoGradient(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	tape := autodiff.New(b)
	x := b.FromFloat32([]float32{1, 2, 3, 4}, []int{1, 4}, tensor.Float32)
	if y := tape.LayerNorm(x, nil, nil, 1e-5); tape.Err() != nil || tape.Recorded() != 0 {
		t.Fatalf("constant LayerNorm: %v, %d recorded (%v)", tape.Err(), tape.Recorded(), y.Shape())
	}
	p := tape.Param(x)
	tape.Cumsum(tape.Mul(p, p), -1)
	if err := tape.Err(); err == nil || !strings.Contains(err.Error(), "Cumsum has no gradient") {
		t.Fatalf("got %v", err)
	}
	if err := tape.Backward([]tensor.Tensor{p}, []tensor.Tensor{x}); err == nil {
		t.Fatal("Backward ran on a failed tape")
	}
	tape.Reset()
	if tape.Err() != nil {
		t.Fatal("Reset kept the error")
	}
	w := &tensor.Linear{W: tape.Param(b.FromFloat32(make([]float32, 8), []int{2, 4}, tensor.Float32)), In: 4, Out: 2}
	tape.Linear(x, w)
	if err := tape.Err(); err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Fatalf("a parameter weight: %v", err)
	}
	tape.Reset()
	if err := tape.Backward([]tensor.Tensor{p}, nil); err == nil {
		t.Fatal("Backward without seeds")
	}
}

// TestAccumulation: a value used twice gets both gradients; integer
// results are constants.
func TestAccumulation(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	tape := autodiff.New(b)
	p := tape.Param(b.FromFloat32([]float32{1, -2, 3}, []int{3}, tensor.Float32))
	y := tape.Add(tape.Mul(p, p), p) // x² + x: gradient 2x + 1
	if _, ok := tape.Argmax(y, 0).(*autodiff.Var); ok {
		t.Fatal("Argmax of a parameter is a Var")
	}
	if err := tape.Backward([]tensor.Tensor{tape.Sum(y, 0, false)}, []tensor.Tensor{b.Scalar(1, tensor.Float32)}); err != nil {
		t.Fatal(err)
	}
	g, _ := b.Float32s(p.Grad())
	for i, want := range []float32{3, -3, 7} {
		if g[i] != want {
			t.Fatalf("gradient %v, want [3 -3 7]", g)
		}
	}
}
