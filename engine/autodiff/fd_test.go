package autodiff_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"perch/engine/autodiff"
	"perch/engine/gocpu"
	"perch/engine/mlx"
	"perch/engine/tensor"
)

// A finite-difference check of every op that has a gradient. Each case
// builds an output from float32 inputs; the objective is Σ out·R for a
// fixed random R. The tape's gradient of every input entry (all of them,
// inputs are small) is compared with the central difference
// (f(x+h) − f(x−h)) / 2h, f evaluated in float32
// and summed in float64, h = 1e-2·max(1, |x|), by the backend under test. Tolerance: |FD − AD| <=
// fdTol·max(1, max|AD|) (float32 rounding over h plus the O(h²) truncation
// of the smooth ops here stay below 1e-3 of the gradient's scale).
const fdTol = 2e-3

type input struct {
	shape  []int
	lo, hi float64 // uniform range
	ints   []int32 // an integer input (not differentiated) when set
}

type fdCase struct {
	name string
	in   []input
	f    func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor
}

func f32(shape ...int) input             { return input{shape: shape, lo: -1, hi: 1} }
func pos(shape ...int) input             { return input{shape: shape, lo: 0.5, hi: 2} }
func neg(shape ...int) input             { return input{shape: shape, lo: -2, hi: -0.5} }
func ints(v []int32, shape ...int) input { return input{shape: shape, ints: v} }

// TestFiniteDifferences runs every case on the Go backend's plain and fast
// paths and, where libmlxc loads, on MLX (the gradients use each backend's
// own ops).
func TestFiniteDifferences(t *testing.T) {
	backends := map[string]func(t *testing.T) tensor.Backend{
		"go-plain": func(*testing.T) tensor.Backend { return gocpu.New(gocpu.Options{Plain: true}) },
		"go":       func(*testing.T) tensor.Backend { return gocpu.New(gocpu.Options{}) },
	}
	if mlx.Available() == nil {
		backends["mlx"] = func(t *testing.T) tensor.Backend { // on the subtest's own locked thread
			runtime.LockOSThread()
			mb, err := mlx.New()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mb.Close(); runtime.UnlockOSThread() })
			return mb
		}
	} else {
		t.Log("libmlxc not found: finite differences on the Go backend only")
	}
	for name, nb := range backends {
		for _, c := range fdCases() {
			t.Run(name+"/"+c.name, func(t *testing.T) { checkFD(t, nb(t), c, autodiff.New) })
			if name == "go" { // the Go backend's fused gradients against the composed ones
				t.Run(name+"-composed/"+c.name, func(t *testing.T) { checkFD(t, nb(t), c, autodiff.NewComposed) })
			}
		}
	}
}

func checkFD(t *testing.T, b tensor.Backend, c fdCase, newTape func(tensor.Backend) *autodiff.Tape) {
	rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
	vals := make([][]float32, len(c.in))
	for i, in := range c.in {
		if in.ints != nil {
			continue
		}
		v := make([]float32, size(in.shape))
		for j := range v {
			v[j] = float32(in.lo + (in.hi-in.lo)*rng.Float64())
		}
		vals[i] = v
	}
	build := func(be tensor.Backend, vs [][]float32) []tensor.Tensor {
		out := make([]tensor.Tensor, len(c.in))
		for i, in := range c.in {
			if in.ints != nil {
				out[i] = be.FromInt32(in.ints, in.shape)
			} else {
				out[i] = be.FromFloat32(vs[i], in.shape, tensor.Float32)
			}
		}
		return out
	}
	// The objective's weights R, shaped like the output.
	out0 := c.f(b, build(b, vals))
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	r := make([]float32, tensor.Size(out0))
	for j := range r {
		r[j] = float32(rng.NormFloat64())
	}
	objective := func(vs [][]float32) float64 {
		y, err := b.Float32s(c.f(b, build(b, vs)))
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for j, v := range y {
			s += float64(v) * float64(r[j])
		}
		return s
	}

	tape := newTape(b)
	xs := build(b, vals)
	params := make([]*autodiff.Var, len(xs))
	for i := range xs {
		if c.in[i].ints == nil {
			params[i] = tape.Param(xs[i])
			xs[i] = params[i]
		}
	}
	out := c.f(tape, xs)
	if err := tape.Backward([]tensor.Tensor{out}, []tensor.Tensor{b.FromFloat32(r, out0.Shape(), tensor.Float32)}); err != nil {
		t.Fatal(err)
	}
	if tape.Recorded() == 0 {
		t.Fatal("nothing was recorded")
	}
	for i, p := range params {
		if p == nil {
			continue
		}
		if p.Grad() == nil {
			t.Fatalf("input %d got no gradient", i)
		}
		ad, err := b.Float32s(p.Grad())
		if err != nil {
			t.Fatal(err)
		}
		scale := 1.0
		for _, g := range ad {
			scale = math.Max(scale, math.Abs(float64(g)))
		}
		var worst float64
		for j := range vals[i] {
			x := vals[i][j]
			h := float32(1e-2 * math.Max(1, math.Abs(float64(x))))
			vals[i][j] = x + h
			fp := objective(vals)
			vals[i][j] = x - h
			fm := objective(vals)
			vals[i][j] = x
			fd := (fp - fm) / (2 * float64(h))
			worst = math.Max(worst, math.Abs(fd-float64(ad[j]))/scale)
		}
		if worst > fdTol {
			t.Errorf("input %d: max |FD - AD| / scale = %.3g (scale %.3g)", i, worst, scale)
		}
		t.Logf("input %d: %d entries, max |FD - AD| / max(1, max|AD|) = %.2g", i, len(ad), worst)
	}
}

func size(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// q4Linear makes a random 4-bit [out, in] Linear (group 32) on b.
func q4Linear(b tensor.Backend, out, in int, seed uint64) *tensor.Linear {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([]byte, out*in/2)
	for i := range w {
		w[i] = byte(rng.Uint32())
	}
	g := in / 32
	sc, bi := make([]float32, out*g), make([]float32, out*g)
	for i := range sc {
		sc[i] = 0.02 + 0.05*rng.Float32()
		bi[i] = -8 * sc[i]
	}
	return &tensor.Linear{W: b.FromBytes(w, tensor.Uint32, []int{out, in / 8}), Scales: b.FromFloat32(sc, []int{out, g}, tensor.Float32),
		Biases: b.FromFloat32(bi, []int{out, g}, tensor.Float32), In: in, Out: out, Bits: 4, GroupSize: 32}
}

func denseLinear(b tensor.Backend, out, in int, seed uint64) *tensor.Linear {
	rng := rand.New(rand.NewPCG(seed, 2))
	w := make([]float32, out*in)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.3)
	}
	return &tensor.Linear{W: b.FromFloat32(w, []int{out, in}, tensor.Float32), In: in, Out: out}
}

func fdCases() []fdCase {
	unary := func(name string, in input, op func(b tensor.Backend, x tensor.Tensor) tensor.Tensor) fdCase {
		return fdCase{name, []input{in}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor { return op(b, x[0]) }}
	}
	bin := func(name string, a, c input, op func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor) fdCase {
		return fdCase{name, []input{a, c}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor { return op(b, x[0], x[1]) }}
	}
	cases := []fdCase{
		bin("Add broadcast", f32(2, 3, 4), f32(3, 1), tensor.Backend.Add),
		bin("Sub broadcast", f32(2, 3), f32(3), tensor.Backend.Sub),
		bin("Mul broadcast", f32(2, 1, 4), f32(3, 4), tensor.Backend.Mul),
		bin("Div", f32(3, 4), pos(3, 4), tensor.Backend.Div),
		bin("Maximum", pos(2, 4), neg(2, 4), func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor {
			two := b.Scalar(2, tensor.Float32)
			return b.Maximum(b.Concat(0, x, y), b.Concat(0, b.Mul(y, two), b.Mul(x, two))) // no ties within h
		}),
		bin("Minimum", pos(2, 4), neg(2, 4), func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor {
			two := b.Scalar(2, tensor.Float32)
			return b.Minimum(b.Concat(0, x, y), b.Concat(0, b.Mul(y, two), b.Mul(x, two)))
		}),
		bin("Pow", pos(3, 4), f32(3, 4), tensor.Backend.Pow),
		bin("Where", f32(3, 4), f32(4), func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor {
			c := b.FromBool([]bool{true, false, true, true, false, false, true, false, true, true, true, false}, []int{3, 4})
			return b.Where(c, x, y)
		}),
		unary("Tanh", f32(3, 5), tensor.Backend.Tanh),
		unary("Exp", f32(3, 5), tensor.Backend.Exp),
		unary("Log", pos(3, 5), tensor.Backend.Log),
		unary("Sin", f32(3, 5), tensor.Backend.Sin),
		unary("Cos", f32(3, 5), tensor.Backend.Cos),
		unary("Sqrt", pos(3, 5), tensor.Backend.Sqrt),
		unary("Rsqrt", pos(3, 5), tensor.Backend.Rsqrt),
		unary("Sigmoid", input{shape: []int{3, 5}, lo: -4, hi: 4}, tensor.Backend.Sigmoid),
		unary("Softplus", input{shape: []int{3, 5}, lo: -4, hi: 4}, tensor.Backend.Softplus),
		unary("GeluTanh", input{shape: []int{4, 6}, lo: -3, hi: 3}, tensor.Backend.GeluTanh),
		unary("AsType", f32(3, 4), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.AsType(x, tensor.Float32), x)
		}),
		unary("Reshape", f32(2, 6), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.Reshape(x, 3, 4), b.Reshape(x, 3, 4))
		}),
		unary("Transpose", f32(2, 3, 4), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.Transpose(x, 2, 0, 1), b.Transpose(x, 2, 0, 1))
		}),
		unary("Slice", f32(3, 7), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.Slice(x, -1, 2, 5), b.Slice(x, 1, 1, 4))
		}),
		bin("Concat", f32(2, 3), f32(2, 2), func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor {
			c := b.Concat(1, x, y, x)
			return b.Mul(c, c)
		}),
		bin("SliceUpdate", f32(2, 6), f32(2, 2), func(b tensor.Backend, x, y tensor.Tensor) tensor.Tensor {
			u := b.SliceUpdate(b.Mul(x, b.Scalar(1, tensor.Float32)), y, 1, 3)
			return b.Mul(u, u)
		}),
		unary("Pad", f32(2, 3), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			p := b.Pad(x, 0, 1, 2, 0.5)
			return b.Mul(p, p)
		}),
		{"Take", []input{f32(5, 3), ints([]int32{4, 0, 4, 2}, 2, 2)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.Take(x[0], x[1], 0)
		}},
		{"Take axis 1", []input{f32(2, 5, 3), ints([]int32{1, 1, 3}, 3)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.Take(x[0], x[1], 1)
		}},
		{"TakeAlong", []input{f32(2, 3, 6), ints([]int32{0, 5, 5, 1, 2, 3, 4, 0, 1, 1, 2, 2}, 2, 3, 2)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.TakeAlong(x[0], x[1], -1)
		}},
		{"TakeAlong axis 0", []input{f32(4, 3), ints([]int32{3, 0, 1, 1, 2, 3}, 2, 3)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.TakeAlong(x[0], x[1], 0)
		}},
		unary("Sum", f32(2, 3, 4), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.Sum(x, 1, true), b.Sum(x, -1, true))
		}),
		unary("Mean", f32(2, 3, 4), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Mul(b.Mean(x, 0, true), b.Mean(x, 2, true))
		}),
		unary("Max", f32(3, 5), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Add(b.Max(x, -1, true), b.Max(x, 0, false))
		}),
		unary("Softmax", input{shape: []int{3, 6}, lo: -3, hi: 3}, func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Softmax(x, -1)
		}),
		unary("LogSumExp", input{shape: []int{3, 6}, lo: -3, hi: 3}, func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Add(b.LogSumExp(x, -1, true), b.LogSumExp(x, 0, false))
		}),
		bin("MatMul batched", f32(2, 3, 4), f32(4, 5), tensor.Backend.MatMul),
		bin("MatMul both", f32(2, 1, 3, 4), f32(1, 2, 4, 2), tensor.Backend.MatMul),
		bin("MatMul LoRA-shaped", f32(1, 9, 16), f32(16, 2), tensor.Backend.MatMul), // dB by (gᵀ·a)ᵀ
		bin("MatMul wide b", f32(1, 2, 3), f32(3, 40), tensor.Backend.MatMul),       // da by (b·gᵀ)ᵀ
		unary("Linear dense", f32(1, 3, 8), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Linear(x, denseLinear(b, 5, 8, 1))
		}),
		unary("Linear 4-bit", f32(1, 9, 64), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.Linear(x, q4Linear(b, 6, 64, 1))
		}),
		unary("LinearT 4-bit", f32(1, 9, 6), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.LinearT(x, q4Linear(b, 6, 64, 2))
		}),
		{"GatherLinear shared row", []input{f32(3, 1, 8), ints([]int32{0, 2, 1, 1, 2, 0}, 3, 2)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.GatherLinear(x[0], experts(b, 3, 5, 8), x[1])
		}},
		{"GatherLinear per slot", []input{f32(3, 2, 8), ints([]int32{0, 2, 1, 1, 2, 0}, 3, 2)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.GatherLinear(x[0], experts(b, 3, 5, 8), x[1])
		}},
		{"GatherLinearT", []input{f32(3, 2, 5), ints([]int32{0, 2, 1, 1, 2, 0}, 3, 2)}, func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
			return b.GatherLinearT(x[0], experts(b, 3, 5, 8), x[1])
		}},
		bin("RMSNorm", f32(2, 3, 8), pos(8), func(b tensor.Backend, x, w tensor.Tensor) tensor.Tensor { return b.RMSNorm(x, w, 1e-6) }),
		unary("RMSNorm no weight", f32(4, 8), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor { return b.RMSNorm(x, nil, 1e-6) }),
		unary("RoPE", f32(1, 2, 5, 8), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.RoPE(x, 8, false, 10000, 1, 3, nil)
		}),
		unary("RoPE partial traditional", f32(1, 2, 5, 8), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			return b.RoPE(x, 6, true, 100, 0.5, 0, nil)
		}),
		unary("RoPE proportional", f32(1, 2, 5, 8), func(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
			inf := float32(math.Inf(1))
			return b.RoPE(x, 8, false, 0, 1, 2, b.FromFloat32([]float32{1, 7.5, inf, inf}, []int{4}, tensor.Float32))
		}),
	}
	for _, m := range []struct {
		name string
		mask func(b tensor.Backend) tensor.Mask
		L, S int
	}{
		{"none", func(tensor.Backend) tensor.Mask { return tensor.Mask{} }, 4, 4},
		{"causal", func(tensor.Backend) tensor.Mask { return tensor.Mask{Kind: tensor.MaskCausal} }, 5, 5},
		{"causal L<S", func(tensor.Backend) tensor.Mask { return tensor.Mask{Kind: tensor.MaskCausal} }, 3, 6},
		{"sliding array", func(b tensor.Backend) tensor.Mask { return tensor.Mask{Kind: tensor.MaskArray, Array: window(b, 6, 2)} }, 6, 6},
	} {
		m := m
		cases = append(cases, fdCase{"SDPA GQA " + m.name, []input{f32(1, 4, m.L, 8), f32(1, 2, m.S, 8), f32(1, 2, m.S, 8)},
			func(b tensor.Backend, x []tensor.Tensor) tensor.Tensor {
				return b.SDPA(x[0], x[1], x[2], 0.7, m.mask(b))
			}})
	}
	return cases
}

// window is a sliding-window causal mask [L, L] (query i sees i-w < j <= i).
func window(b tensor.Backend, L, w int) tensor.Tensor {
	v := make([]bool, L*L)
	for i := 0; i < L; i++ {
		for j := max(0, i-w+1); j <= i; j++ {
			v[i*L+j] = true
		}
	}
	return b.FromBool(v, []int{L, L})
}

func experts(b tensor.Backend, E, out, in int) *tensor.Linear {
	l := denseLinear(b, E*out, in, 3)
	l.W = b.Reshape(l.W, E, out, in)
	l.Out = out
	return l
}
