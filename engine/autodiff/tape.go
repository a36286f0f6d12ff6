// Package autodiff is reverse-mode differentiation over tensor.Backend: a
// Tape implements the Backend interface on top of any backend (Go or MLX),
// so the unchanged model code runs on it, and records every op whose
// inputs depend on a parameter. Backward then sends gradients back through
// the recorded ops, each expressed in the inner backend's own ops (batched
// matmuls for the matmul-shaped ones), to the parameters.
//
// Tensors that depend on no parameter are the inner backend's own tensors
// (no wrapper, nothing recorded), so frozen weights, masks and constants
// cost nothing; tensors that do are *Var. An op that has no gradient
// (LayerNorm, the convolutions, Cumsum) fails the tape when a *Var reaches
// it; integer and boolean results (Argmax, Equal, ...) are constants.
package autodiff

import (
	"errors"
	"fmt"

	"perch/engine/tensor"
)

// Tape records differentiable ops over an inner backend. Like a backend, it
// is not safe for concurrent use.
type Tape struct {
	b     tensor.Backend
	nodes []*Var // recorded ops in execution order (a topological order)
	err   error
	bytes int64 // bytes of the recorded values
	peak  int64
	// composed: do not use the backend's fused gradients (fused.go).
	composed bool
}

// Var is a value that depends on a parameter.
type Var struct {
	val     tensor.Tensor
	parents []*Var
	// back maps the gradient of this value to one gradient per parent
	// (nil where a parent gets none), each shaped like that parent.
	back func(g tensor.Tensor) []tensor.Tensor
	grad tensor.Tensor
}

func (v *Var) Shape() []int        { return v.val.Shape() }
func (v *Var) DType() tensor.DType { return v.val.DType() }

// Value is the inner backend's tensor behind v.
func (v *Var) Value() tensor.Tensor { return v.val }

// Grad is the gradient accumulated into v by Backward (nil when none
// reached it).
func (v *Var) Grad() tensor.Tensor { return v.grad }

var _ tensor.Backend = (*Tape)(nil)

// New returns a tape over b.
func New(b tensor.Backend) *Tape { return &Tape{b: b} }

// Inner is the wrapped backend.
func (t *Tape) Inner() tensor.Backend { return t.b }

// Param makes x (an inner tensor) a differentiable leaf.
func (t *Tape) Param(x tensor.Tensor) *Var { return &Var{val: Value(x)} }

// Value is the inner tensor behind x (x itself when it is not a *Var).
func Value(x tensor.Tensor) tensor.Tensor {
	if v, ok := x.(*Var); ok {
		return v.val
	}
	return x
}

// un splits x into its inner value and its Var (nil for a constant).
func un(x tensor.Tensor) (tensor.Tensor, *Var) {
	if v, ok := x.(*Var); ok {
		return v.val, v
	}
	return x, nil
}

// record returns y, or a Var recording how y's gradient reaches parents
// when any of them is a Var.
func (t *Tape) record(y tensor.Tensor, parents []*Var, back func(g tensor.Tensor) []tensor.Tensor) tensor.Tensor {
	any := false
	for _, p := range parents {
		if p != nil {
			any = true
		}
	}
	if !any || t.err != nil {
		return y
	}
	v := &Var{val: y, parents: parents, back: back}
	t.nodes = append(t.nodes, v)
	t.bytes += Bytes(y)
	t.peak = max(t.peak, t.bytes)
	return v
}

// fail records the tape's first error.
func (t *Tape) fail(format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf("autodiff: "+format, args...)
	}
}

// noGrad fails the tape when a Var reaches op, which has no gradient.
func (t *Tape) noGrad(op string, xs ...tensor.Tensor) {
	for _, x := range xs {
		if _, ok := x.(*Var); ok {
			t.fail("%s has no gradient, but a value that depends on a parameter reached it", op)
			return
		}
	}
}

// Backward sends seeds[i] (shaped like outs[i]) back from outs[i] and
// accumulates the gradients into the parameters (Var.Grad). Outputs that
// depend on no parameter are skipped. Each recorded op's closure is
// released once it has run; call Reset to forget the tape.
func (t *Tape) Backward(outs, seeds []tensor.Tensor) error {
	if len(outs) != len(seeds) {
		return errors.New("autodiff: Backward needs one seed per output")
	}
	if err := t.Err(); err != nil {
		return err
	}
	for i, o := range outs {
		v, ok := o.(*Var)
		if !ok || seeds[i] == nil {
			continue
		}
		t.accumulate(v, Value(seeds[i]))
	}
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := t.nodes[i]
		if n.grad == nil || n.back == nil {
			continue
		}
		if err := t.Err(); err != nil { // failed ops left empty tensors behind
			return err
		}
		gs := n.back(n.grad)
		for j, p := range n.parents {
			if p != nil && j < len(gs) && gs[j] != nil {
				t.accumulate(p, gs[j])
			}
		}
		n.grad, n.back = nil, nil
	}
	return t.Err()
}

func (t *Tape) accumulate(v *Var, g tensor.Tensor) {
	if !sameShape(g.Shape(), v.val.Shape()) {
		t.fail("gradient %v for a value of shape %v", g.Shape(), v.val.Shape())
		return
	}
	if g.DType() != v.val.DType() {
		g = t.b.AsType(g, v.val.DType())
	}
	if v.grad == nil {
		v.grad = g
	} else {
		v.grad = t.b.Add(v.grad, g)
	}
}

// Reset forgets every recorded op (their values become garbage for the Go
// backend, or sweepable for MLX) and clears the tape's error.
func (t *Tape) Reset() {
	clear(t.nodes)
	t.nodes, t.bytes, t.err = t.nodes[:0], 0, nil
}

// Recorded is the number of ops on the tape.
func (t *Tape) Recorded() int { return len(t.nodes) }

// Bytes is the size of the recorded values; PeakBytes the most since
// ResetPeak.
func (t *Tape) Bytes() int64     { return t.bytes }
func (t *Tape) PeakBytes() int64 { return t.peak }
func (t *Tape) ResetPeakBytes()  { t.peak = t.bytes }

// Bytes is the storage of x at its dtype's width.
func Bytes(x tensor.Tensor) int64 {
	n := int64(tensor.Size(x))
	switch x.DType() {
	case tensor.Bool:
		return n
	case tensor.BFloat16, tensor.Float16:
		return 2 * n
	}
	return 4 * n
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The rest of the Backend: creation, evaluation, readback and memory go
// straight to the inner backend (unwrapping Vars).

func (t *Tape) Name() string { return "autodiff(" + t.b.Name() + ")" }
func (t *Tape) Lazy() bool   { return t.b.Lazy() }

func (t *Tape) Err() error {
	if t.err != nil {
		return t.err
	}
	return t.b.Err()
}

func (t *Tape) ClearErr() { t.err = nil; t.b.ClearErr() }

func (t *Tape) FromFloat32(data []float32, shape []int, dt tensor.DType) tensor.Tensor {
	return t.b.FromFloat32(data, shape, dt)
}
func (t *Tape) FromInt32(data []int32, shape []int) tensor.Tensor { return t.b.FromInt32(data, shape) }
func (t *Tape) FromBool(data []bool, shape []int) tensor.Tensor   { return t.b.FromBool(data, shape) }
func (t *Tape) FromBytes(raw []byte, dt tensor.DType, shape []int) tensor.Tensor {
	return t.b.FromBytes(raw, dt, shape)
}
func (t *Tape) Scalar(v float64, dt tensor.DType) tensor.Tensor  { return t.b.Scalar(v, dt) }
func (t *Tape) Zeros(shape []int, dt tensor.DType) tensor.Tensor { return t.b.Zeros(shape, dt) }

func values(ts []tensor.Tensor) []tensor.Tensor {
	out := make([]tensor.Tensor, len(ts))
	for i, x := range ts {
		out[i] = Value(x)
	}
	return out
}

func (t *Tape) Eval(ts ...tensor.Tensor) error {
	if t.err != nil {
		return t.err
	}
	return t.b.Eval(values(ts)...)
}

func (t *Tape) AsyncEval(ts ...tensor.Tensor) error {
	if t.err != nil {
		return t.err
	}
	return t.b.AsyncEval(values(ts)...)
}

func (t *Tape) Float32s(x tensor.Tensor) ([]float32, error) {
	if t.err != nil {
		return nil, t.err
	}
	return t.b.Float32s(Value(x))
}

func (t *Tape) Int32s(x tensor.Tensor) ([]int32, error) {
	if t.err != nil {
		return nil, t.err
	}
	return t.b.Int32s(Value(x))
}

func (t *Tape) Pin(ts ...tensor.Tensor)   { t.b.Pin(values(ts)...) }
func (t *Tape) Unpin(ts ...tensor.Tensor) { t.b.Unpin(values(ts)...) }

// Sweep and SweepSince do nothing while ops are recorded (their closures
// hold inner tensors the backward pass needs); after Reset they go to the
// inner backend.
func (t *Tape) Sweep(keep ...tensor.Tensor) {
	if len(t.nodes) == 0 {
		t.b.Sweep(values(keep)...)
	}
}

func (t *Tape) Mark() uint64 { return t.b.Mark() }

func (t *Tape) SweepSince(mark uint64, keep ...tensor.Tensor) {
	if len(t.nodes) == 0 {
		t.b.SweepSince(mark, values(keep)...)
	}
}

func (t *Tape) ActiveMemory() int64 { return t.b.ActiveMemory() }
func (t *Tape) PeakMemory() int64   { return t.b.PeakMemory() }
func (t *Tape) ResetPeakMemory()    { t.b.ResetPeakMemory() }

// Close forgets the tape; the inner backend stays open (it is the
// caller's).
func (t *Tape) Close() error { t.Reset(); return nil }
