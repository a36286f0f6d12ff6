package mlx

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"perch/engine/safetensors"
	"perch/engine/tensor"
)

// Categorical cannot match the Go backend draw for draw (different RNGs);
// check determinism and the sampled distribution instead.
func TestCategorical(t *testing.T) {
	b := newBackend(t)
	const rows = 4000
	probs := []float64{0.1, 0.2, 0.7, 0}
	logits := make([]float32, 0, rows*len(probs))
	for range rows {
		for _, p := range probs {
			logits = append(logits, float32(math.Log(p))) // log 0 = -Inf: never drawn
		}
	}
	x := b.FromFloat32(logits, []int{rows, len(probs)}, tensor.Float32)
	draw := func(seed uint64) []int32 {
		s := b.Categorical(x, seed)
		if got := s.Shape(); len(got) != 1 || got[0] != rows || s.DType() != tensor.Int32 {
			t.Fatalf("samples: shape %v dtype %v, want [%d] int32", got, s.DType(), rows)
		}
		v, err := b.Int32s(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, a2, c := draw(7), draw(7), draw(8)
	if !equalInts32(a, a2) {
		t.Error("same seed drew different samples")
	}
	if equalInts32(a, c) {
		t.Error("different seeds drew identical samples")
	}
	var count [4]int
	for _, v := range a {
		count[v]++
	}
	for i, p := range probs {
		// 4000 draws: the standard error is below 0.008; allow 4 of them.
		if got := float64(count[i]) / rows; math.Abs(got-p) > 0.03 {
			t.Errorf("category %d drawn with frequency %.3f, want %.2f", i, got, p)
		}
	}
}

// GeluTanh in bf16 rounds every step to bf16 in nn.gelu_approx's order;
// emulate that in Go and compare with MLX.
func TestGeluTanhBF16Steps(t *testing.T) {
	b := newBackend(t)
	r := newRand(3)
	xs := r.f32(4096, 6)
	for i := range xs {
		xs[i] = bf16(xs[i])
	}
	got, err := b.Float32s(b.GeluTanh(b.FromFloat32(xs, []int{len(xs)}, tensor.BFloat16)))
	if err != nil {
		t.Fatal(err)
	}
	c := func(v float64) float32 { return bf16(float32(v)) }
	half, coef, s2p, one := c(0.5), c(0.044715), c(math.Sqrt(2/math.Pi)), c(1)
	stepped := make([]float32, len(xs))
	once := make([]float32, len(xs))
	for i, x := range xs {
		x3 := bf16(float32(math.Pow(float64(x), 3)))
		inner := bf16(s2p * bf16(x+bf16(coef*x3)))
		th := bf16(float32(math.Tanh(float64(inner))))
		stepped[i] = bf16(bf16(half*x) * bf16(one+th))
		f := float64(x)
		once[i] = bf16(float32(0.5 * f * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(f+0.044715*f*f*f)))))
	}
	var offStepped, offOnce int
	for i := range got {
		if got[i] != stepped[i] {
			offStepped++
			// tanh may differ by one float32 ulp before rounding: one bf16 ulp.
			if ulp := math.Abs(float64(got[i])) / 128; math.Abs(float64(got[i]-stepped[i])) > ulp {
				t.Errorf("x=%v: mlx %v, bf16 step emulation %v", xs[i], got[i], stepped[i])
			}
		}
		if got[i] != once[i] {
			offOnce++
		}
	}
	t.Logf("bf16 GeluTanh: %d/%d differ from the per-step emulation, %d from one rounding of the exact value", offStepped, len(xs), offOnce)
	if offStepped*4 > offOnce {
		t.Errorf("MLX is not closer to per-step bf16 rounding (%d off) than to one rounding (%d off)", offStepped, offOnce)
	}
}

func TestScalarRoundsLikeMLX(t *testing.T) {
	b := newBackend(t)
	for _, c := range []struct {
		v    float64
		dt   tensor.DType
		want float32
	}{
		{math.Sqrt(3840), tensor.BFloat16, 62},
		{math.Sqrt(256), tensor.BFloat16, 16},
		{math.Pow(2, -0.5), tensor.BFloat16, 0.70703125},
		{math.Sqrt(32), tensor.BFloat16, 5.65625},
		{math.Pow(1536, -0.5), tensor.BFloat16, 0.0255126953125},
		{1.0 / 3, tensor.Float32, float32(1.0 / 3)},
	} {
		s := b.Scalar(c.v, c.dt)
		got, err := b.Float32s(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Shape()) != 0 || s.DType() != c.dt || got[0] != c.want {
			t.Errorf("Scalar(%v, %v) = %v %v shape %v, want %v", c.v, c.dt, got, s.DType(), s.Shape(), c.want)
		}
	}
}

func TestLoadSafetensors(t *testing.T) {
	b := newBackend(t)
	path := filepath.Join(t.TempDir(), "w.safetensors")
	f32 := []float32{1.5, -2, 3.25, 0}
	raw32 := make([]byte, 16)
	rawBF := make([]byte, 8)
	for i, v := range f32 {
		binary.LittleEndian.PutUint32(raw32[4*i:], math.Float32bits(v))
		binary.LittleEndian.PutUint16(rawBF[2*i:], uint16(math.Float32bits(v)>>16))
	}
	rawU := make([]byte, 8)
	binary.LittleEndian.PutUint32(rawU, 0xdeadbeef)
	binary.LittleEndian.PutUint32(rawU[4:], 7)
	err := safetensors.Write(path, []safetensors.Tensor{
		{Name: "a.weight", DType: "F32", Shape: []int{2, 2}, Data: raw32},
		{Name: "b.weight", DType: "BF16", Shape: []int{4}, Data: rawBF},
		{Name: "c.packed", DType: "U32", Shape: []int{2}, Data: rawU},
	}, map[string]string{"format": "mlx"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := b.LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 {
		t.Fatalf("loaded %d tensors, want 3", len(ws))
	}
	b.Pin(ws["a.weight"], ws["b.weight"], ws["c.packed"])
	for name, dt := range map[string]tensor.DType{"a.weight": tensor.Float32, "b.weight": tensor.BFloat16, "c.packed": tensor.Uint32} {
		if ws[name].DType() != dt {
			t.Errorf("%s: dtype %v, want %v", name, ws[name].DType(), dt)
		}
	}
	for _, name := range []string{"a.weight", "b.weight"} {
		got, err := b.Float32s(ws[name])
		if err != nil {
			t.Fatal(err)
		}
		if !equalF32(got, f32) {
			t.Errorf("%s = %v, want %v", name, got, f32)
		}
	}
	// The arrays are the same as FromBytes makes.
	d, err := b.Float32s(b.Sub(ws["b.weight"], b.FromBytes(rawBF, tensor.BFloat16, []int{4})))
	if err != nil || !equalF32(d, make([]float32, 4)) {
		t.Errorf("loaded minus FromBytes = %v, %v", d, err)
	}
	u, err := b.Int32s(ws["c.packed"])
	if err != nil || uint32(u[0]) != 0xdeadbeef || u[1] != 7 {
		t.Errorf("packed = %x, %v", u, err)
	}

	if _, err := b.LoadSafetensors(filepath.Join(t.TempDir(), "missing.safetensors")); err == nil {
		t.Error("loading a missing file succeeded")
	} else if b.Err() != nil {
		t.Errorf("a failed load poisoned the backend: %v", b.Err())
	} else {
		t.Logf("missing file: %v", err)
	}
}

// TestFromBytesCopies: the backend says FromBytes copies (so the loader
// drops the file pages it read), and it does: overwriting raw right after
// the call, before anything is evaluated, leaves the array as it was.
func TestFromBytesCopies(t *testing.T) {
	b := newBackend(t)
	if !tensor.CopiesBytes(b) {
		t.Fatal("the MLX backend does not say FromBytes copies")
	}
	raw := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i+1)))
	}
	x := b.FromBytes(raw, tensor.Float32, []int{4})
	clear(raw)
	got, err := b.Float32s(x)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != float32(i+1) {
			t.Fatalf("after overwriting raw the array is %v, want [1 2 3 4]", got)
		}
	}
}
