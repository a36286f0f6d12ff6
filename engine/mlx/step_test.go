package mlx

import (
	"math"
	"testing"

	"perch/engine/tensor"
)

// stepBackend returns a backend with compiled steps, or skips.
func stepBackend(t *testing.T) *Backend {
	t.Helper()
	b := newBackend(t)
	if !b.StepsAvailable() {
		t.Skipf("compiled steps unavailable here (GPU, PERCH_MLX_COMPILE, or no C++ compiler: %v)", jitErr)
	}
	return b
}

// TestStepReplays: a step writes at a position given as a tensor, is traced
// once per input signature, and gives the uncompiled ops' results.
func TestStepReplays(t *testing.T) {
	b := stepBackend(t)
	f, err := b.CompileStep(func(in []tensor.Tensor) []tensor.Tensor {
		buf, x, pos := in[0], in[1], in[2]
		y := b.Mul(b.GeluTanh(x), b.Scalar(math.Sqrt(0.5), tensor.Float32))
		return []tensor.Tensor{b.SliceUpdateDynamic(buf, y, pos, 2), b.Sum(y, -1, false)}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &gen{b, newRand(1)}
	buf := b.Zeros([]int{1, 2, 6, 4}, tensor.Float32)
	b.Pin(buf)
	for step, want := range []bool{true, false, false} {
		x := g.F(1, 2, 1, 4)
		pos := b.FromInt32([]int32{int32(step + 1)}, []int{1})
		out, traced, err := f.Call(buf, x, pos)
		if err != nil {
			t.Fatal(err)
		}
		if traced != want {
			t.Fatalf("step %d: traced %v", step, traced)
		}
		ref := b.SliceUpdate(buf, b.Mul(b.GeluTanh(x), b.Scalar(math.Sqrt(0.5), tensor.Float32)), 2, step+1)
		if err := sameBits(mustF32(t, b, out[0]), mustF32(t, b, ref)); err != "" {
			t.Fatalf("step %d: %s", step, err)
		}
		b.Unpin(buf)
		buf = out[0]
		b.Pin(buf)
		b.Sweep()
	}
	// A new shape traces again.
	big := b.Zeros([]int{1, 2, 9, 4}, tensor.Float32)
	if _, traced, err := f.Call(big, g.F(1, 2, 1, 4), b.FromInt32([]int32{8}, []int{1})); err != nil || !traced {
		t.Fatalf("new shape: traced %v, %v", traced, err)
	}
	if f.Traces() != 2 {
		t.Fatalf("%d traces, want 2", f.Traces())
	}
	b.Unpin(buf)
	b.Sweep()
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestStepFailsCleanly: a body that bakes a position in fails, the
// backend keeps no error, and the step can be closed.
func TestStepFailsCleanly(t *testing.T) {
	b := stepBackend(t)
	f, err := b.CompileStep(func(in []tensor.Tensor) []tensor.Tensor {
		return []tensor.Tensor{b.SliceUpdate(in[0], in[1], 0, 1)}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := f.Call(b.Zeros([]int{4}, tensor.Float32), b.Zeros([]int{1}, tensor.Float32)); err == nil {
		t.Fatal("a static slice update was traced")
	}
	if err := b.Err(); err != nil {
		t.Fatalf("error left behind: %v", err)
	}
	if u, _ := b.Live(); u != 2 {
		t.Fatalf("%d arrays live, want the 2 inputs", u)
	}
}

// TestStepBitExact: a step of the ops a decode step uses, with constants a
// fused kernel would print inexactly (1/48, 2^-0.5, a [1] weight of 1/3,
// -Inf), replays the same bits as the same ops run one by one, in float32
// and bfloat16; RoPEDynamic gives RoPE's bits.
func TestStepBitExact(t *testing.T) {
	b := stepBackend(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
		g := &gen{b, newRand(7)}
		third := b.FromFloat32([]float32{1.0 / 3}, []int{1}, dt)
		w, freqs := b.AsType(g.F(48), dt), g.In(1, 50, 16)
		b.Pin(third, w, freqs)
		body := func(in []tensor.Tensor) []tensor.Tensor {
			x, q, k, kbuf, pos, mask := in[0], in[1], in[2], in[3], in[4], in[5]
			h := b.GeluTanh(b.RMSNorm(x, w, 1e-6))
			h = b.Mul(b.Mul(h, b.Scalar(math.Sqrt(0.5), dt)), third)
			h = b.Where(b.Less(h, b.Scalar(0, dt)), b.Scalar(math.Inf(-1), dt), h)
			q = b.RoPEDynamic(q, 32, false, 10000, 1, pos, nil)
			k = b.RoPEDynamic(k, 32, false, 0, 1, pos, freqs)
			kbuf = b.SliceUpdateDynamic(kbuf, k, pos, 2)
			return []tensor.Tensor{h, b.SDPA(q, kbuf, kbuf, 0.3, tensor.Mask{Kind: tensor.MaskArray, Array: mask}), kbuf}
		}
		f, err := b.CompileStep(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int32{3, 5} {
			vis := []bool{true, false, true, true, true, true, false, false}
			in := []tensor.Tensor{b.AsType(g.F(1, 1, 48), dt), b.AsType(g.F(1, 2, 1, 32), dt), b.AsType(g.F(1, 1, 1, 32), dt),
				b.AsType(g.F(1, 1, 8, 32), dt), b.FromInt32([]int32{p}, []int{1}), b.FromBool(vis, []int{1, 8})}
			got, _, err := f.Call(in...)
			if err != nil {
				t.Fatal(err)
			}
			want := body(in)
			for i := range want {
				if err := sameBits(mustF32(t, b, got[i]), mustF32(t, b, want[i])); err != "" {
					t.Errorf("%v, position %d, result %d: %s", dt, p, i, err)
				}
			}
			rope := b.RoPE(in[1], 32, false, 10000, 1, int(p), nil)
			if err := sameBits(mustF32(t, b, b.RoPEDynamic(in[1], 32, false, 10000, 1, in[4], nil)), mustF32(t, b, rope)); err != "" {
				t.Errorf("%v: RoPEDynamic: %s", dt, err)
			}
			b.Sweep()
		}
		if f.Traces() != 1 {
			t.Errorf("%v: %d traces", dt, f.Traces())
		}
		f.Close()
		b.Unpin(third, w, freqs)
		b.Sweep()
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}
