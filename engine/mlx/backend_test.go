package mlx

import (
	"strings"
	"testing"

	"perch/engine/tensor"
)

func TestDevice(t *testing.T) {
	b := newBackend(t)
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MLX %s from %s on %s", v, LibraryPath(), b.Device())
}

// A shape mismatch is a Go error with the op's name and MLX's message; the
// process keeps running, later ops are no-ops, and ClearErr recovers.
func TestErrorIsGoError(t *testing.T) {
	b := newBackend(t)
	x := b.FromFloat32([]float32{1, 2, 3}, []int{3}, tensor.Float32)
	y := b.FromFloat32([]float32{1, 2}, []int{2}, tensor.Float32)
	z := b.Add(x, y)
	err := b.Err()
	if err == nil {
		t.Fatal("adding [3] and [2] succeeded")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "mlx: add: ") || !strings.Contains(strings.ToLower(msg), "broadcast") {
		t.Errorf("error %q: want the op name and MLX's broadcast message", msg)
	}
	if z.Shape() != nil {
		t.Errorf("failed op returned shape %v, want the empty tensor", z.Shape())
	}
	// Sticky: later ops are no-ops, readback reports the first error.
	w := b.Mul(x, x)
	if _, err2 := b.Float32s(w); err2 != err {
		t.Errorf("readback after failure: %v, want the first error", err2)
	}
	b.Reshape(x, 7) // would fail too; the first error stays
	if b.Err() != err {
		t.Errorf("error replaced by %v", b.Err())
	}

	b.ClearErr()
	got, err := b.Float32s(b.Mul(x, x))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, 4, 9}; !equalF32(got, want) {
		t.Errorf("after ClearErr: got %v, want %v", got, want)
	}

	// Errors that MLX raises while building other ops, and misuse caught in Go.
	for name, f := range map[string]func(){
		"mlx: reshape: ":                         func() { b.Reshape(x, 2, 2) },
		"mlx: matmul: ":                          func() { b.MatMul(x, y) },
		"mlx: slice: axis":                       func() { b.Slice(x, 3, 0, 1) },
		"mlx: from float32":                      func() { b.FromFloat32([]float32{1}, []int{2}, tensor.Float32) },
		"mlx: sdpa: ":                            func() { b.SDPA(x, x, x, 1, tensor.Mask{}) },
		"mlx: linear: nil":                       func() { b.Linear(x, nil) },
		"mlx: add: operand is not an MLX tensor": func() { b.Add(x, fakeTensor{}) },
	} {
		b.ClearErr()
		f()
		if err := b.Err(); err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("got %v, want an error starting %q", err, name)
		}
	}
}

type fakeTensor struct{}

func (fakeTensor) Shape() []int        { return []int{3} }
func (fakeTensor) DType() tensor.DType { return tensor.Float32 }

func TestUseAfterSweepIsAnError(t *testing.T) {
	b := newBackend(t)
	x := b.FromFloat32([]float32{1, 2}, []int{2}, tensor.Float32)
	b.Sweep()
	if x.Shape() != nil {
		t.Errorf("swept tensor still has shape %v", x.Shape())
	}
	b.Exp(x)
	if err := b.Err(); err == nil || !strings.Contains(err.Error(), "freed by Sweep") {
		t.Fatalf("using a swept tensor: %v", err)
	}
}

func TestPinSweepKeep(t *testing.T) {
	b := newBackend(t)
	w := b.FromFloat32([]float32{1, 2, 3, 4}, []int{2, 2}, tensor.Float32)
	b.Pin(w)
	x := b.Add(w, w)
	y := b.Mul(x, w) // depends on x; sweeping x before evaluation is fine
	keep := b.Exp(w)
	b.Sweep(y, keep)
	if u, p := b.Live(); u != 2 || p != 1 {
		t.Fatalf("after Sweep(y, keep): %d unpinned, %d pinned; want 2, 1", u, p)
	}
	got, err := b.Float32s(y)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{2, 8, 18, 32}; !equalF32(got, want) {
		t.Errorf("y = %v, want %v", got, want)
	}
	b.Sweep()
	if u, p := b.Live(); u != 0 || p != 1 {
		t.Fatalf("after Sweep(): %d unpinned, %d pinned; want 0, 1", u, p)
	}
	if y.Shape() != nil || w.Shape() == nil {
		t.Fatal("Sweep freed the wrong arrays")
	}
	b.Unpin(w)
	b.Sweep()
	if u, p := b.Live(); u != 0 || p != 0 || w.Shape() != nil {
		t.Fatalf("after Unpin and Sweep: %d unpinned, %d pinned", u, p)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// step builds a small decoder-like graph over pinned weights and returns the
// logits; it is the unit of work in the memory tests.
func step(b *Backend, x tensor.Tensor, w *tensor.Linear, norm tensor.Tensor) tensor.Tensor {
	h := b.RMSNorm(x, norm, 1e-6)
	h = b.GeluTanh(b.Linear(h, w))
	h = b.Add(x, b.Mul(h, b.Scalar(0.5, tensor.Float32)))
	q := b.Reshape(h, 1, 1, 4, 16)
	q = b.RoPE(q, 16, false, 10000, 1, 3, nil)
	o := b.SDPA(q, q, q, 1, tensor.Mask{Kind: tensor.MaskCausal})
	return b.Softmax(b.Reshape(o, 4, 16), -1)
}

// Active memory returns to its baseline after many swept steps, and after a
// "cancelled" run that stops midway with unevaluated graphs in flight.
func TestMemoryReturnsToBaseline(t *testing.T) {
	b := newBackend(t)
	r := newRand(1)
	w := &tensor.Linear{W: b.FromFloat32(r.f32(64*64, 0.1), []int{64, 64}, tensor.Float32), In: 64, Out: 64}
	norm := b.FromFloat32(r.f32(64, 1), []int{64}, tensor.Float32)
	x := b.FromFloat32(r.f32(64, 1), []int{1, 64}, tensor.Float32)
	b.Pin(w.W, norm, x)
	if err := b.Eval(w.W, norm, x); err != nil {
		t.Fatal(err)
	}
	// Warm up once: GeluTanh's constants are made on first use and kept.
	if _, err := b.Float32s(step(b, x, w, norm)); err != nil {
		t.Fatal(err)
	}
	b.Sweep()
	base := b.ActiveMemory()

	for i := range 50 {
		h := x
		for range 8 {
			h = b.Reshape(step(b, h, w, norm), 1, 64)
		}
		if _, err := b.Float32s(h); err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
		b.Sweep()
		if got := b.ActiveMemory(); got != base {
			t.Fatalf("iteration %d: active memory %d, baseline %d", i, got, base)
		}
	}

	// Cancelled: build graphs, evaluate some asynchronously, stop midway.
	for i := range 10 {
		h := x
		for j := range 8 {
			h = b.Reshape(step(b, h, w, norm), 1, 64)
			if j == 3 {
				if err := b.AsyncEval(h); err != nil {
					t.Fatal(err)
				}
			}
			if j == 5 {
				break // the request's context was cancelled
			}
		}
		b.Sweep()
		if got := b.ActiveMemory(); got != base {
			t.Fatalf("cancelled run %d: active memory %d, baseline %d", i, got, base)
		}
	}
	if u, _ := b.Live(); u != 0 {
		t.Errorf("%d unpinned arrays left after Sweep", u)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseFreesEverything(t *testing.T) {
	b := newBackend(t)
	base := b.ActiveMemory()
	b2, err := New()
	if err != nil {
		t.Fatal(err)
	}
	x := b2.FromFloat32(make([]float32, 1<<16), []int{1 << 16}, tensor.Float32)
	b2.Pin(x)
	y := b2.Exp(x)
	if err := b2.Eval(y); err != nil {
		t.Fatal(err)
	}
	if b.ActiveMemory() <= base {
		t.Fatal("evaluated arrays did not raise active memory")
	}
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.ActiveMemory(); got != base {
		t.Errorf("after Close: active memory %d, baseline %d", got, base)
	}
	if b2.Exp(x); b2.Err() == nil {
		t.Error("op on a closed backend did not report an error")
	}
}
