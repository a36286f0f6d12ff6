package mlx

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"testing"

	"perch/engine/gocpu"
	"perch/engine/tensor"
)

// gen makes the same random inputs on any backend: two gens with the same
// seed produce identical data.
type gen struct {
	be tensor.Backend
	r  testRand
}

func (g *gen) F(shape ...int) tensor.Tensor {
	return g.be.FromFloat32(g.r.f32(size(shape), 2), shape, tensor.Float32)
}

// In returns values uniform in [lo, hi).
func (g *gen) In(lo, hi float32, shape ...int) tensor.Tensor {
	return g.be.FromFloat32(g.r.pos(size(shape), lo, hi), shape, tensor.Float32)
}

// BF returns bfloat16 values in [-2, 2).
func (g *gen) BF(shape ...int) tensor.Tensor {
	return g.be.FromFloat32(g.r.f32(size(shape), 2), shape, tensor.BFloat16)
}

func (g *gen) I(hi int, shape ...int) tensor.Tensor {
	return g.be.FromInt32(g.r.i32(size(shape), hi), shape)
}

func (g *gen) B(shape ...int) tensor.Tensor { return g.be.FromBool(g.r.bools(size(shape)), shape) }

// Small returns small integers as floats (so Equal/Less see ties).
func (g *gen) Small(shape ...int) tensor.Tensor {
	v := g.r.i32(size(shape), 3)
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return g.be.FromFloat32(f, shape, tensor.Float32)
}

// Dense is a dense [experts..., out, in] Linear in dt.
func (g *gen) Dense(experts, out, in int, bias bool, dt tensor.DType) *tensor.Linear {
	shape := []int{out, in}
	if experts > 0 {
		shape = []int{experts, out, in}
	}
	l := &tensor.Linear{W: g.be.FromFloat32(g.r.f32(size(shape), 0.5), shape, dt), In: in, Out: out}
	if bias {
		n := out * max(experts, 1)
		l.Bias = g.be.FromFloat32(g.r.f32(n, 0.5), biasShape(experts, out), dt)
	}
	return l
}

func biasShape(experts, out int) []int {
	if experts > 0 {
		return []int{experts, out}
	}
	return []int{out}
}

// Quant is an MLX-affine quantized Linear with random codes, scales in dt.
func (g *gen) Quant(experts, out, in, bits, groupSize int, bias bool, dt tensor.DType) *tensor.Linear {
	rows := out * max(experts, 1)
	words := in * bits / 32
	raw := make([]byte, 4*rows*words)
	for i := 0; i < rows*words; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], g.r.r.Uint32())
	}
	lead := []int{}
	if experts > 0 {
		lead = []int{experts}
	}
	wShape := append(append([]int{}, lead...), out, words)
	sShape := append(append([]int{}, lead...), out, in/groupSize)
	l := &tensor.Linear{
		W:      g.be.FromBytes(raw, tensor.Uint32, wShape),
		Scales: g.be.FromFloat32(g.r.pos(size(sShape), 0.005, 0.03), sShape, dt),
		Biases: g.be.FromFloat32(g.r.f32(size(sShape), 0.1), sShape, dt),
		In:     in, Out: out, Bits: bits, GroupSize: groupSize,
	}
	if bias {
		l.Bias = g.be.FromFloat32(g.r.f32(rows, 0.5), biasShape(experts, out), dt)
	}
	return l
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// parityCase is one op checked against the Go backend's plain path:
// |mlx - go| <= atol + rtol*|go| element-wise (integers and bools exactly).
type parityCase struct {
	name       string
	dt         tensor.DType // MLX's expected result dtype
	atol, rtol float64
	run        func(b tensor.Backend, g *gen) tensor.Tensor
}

const (
	f32Tol  = 2e-6 // one or two float32 roundings of O(1) values
	bf16Rel = 1.0 / 128
)

func parityCases() []parityCase {
	bin := func(f func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor, xs, ys []int) func(tensor.Backend, *gen) tensor.Tensor {
		return func(b tensor.Backend, g *gen) tensor.Tensor { return f(b)(g.F(xs...), g.F(ys...)) }
	}
	un := func(f func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor, lo, hi float32) func(tensor.Backend, *gen) tensor.Tensor {
		return func(b tensor.Backend, g *gen) tensor.Tensor { return f(b)(g.In(lo, hi, 3, 17)) }
	}
	unBF := func(f func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor) func(tensor.Backend, *gen) tensor.Tensor {
		return func(b tensor.Backend, g *gen) tensor.Tensor { return f(b)(g.BF(3, 17)) }
	}
	return []parityCase{
		// Creation.
		{name: "FromFloat32/bf16", dt: tensor.BFloat16, run: func(b tensor.Backend, g *gen) tensor.Tensor { return g.BF(4, 5) }},
		{name: "FromBytes/bf16", dt: tensor.BFloat16, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			raw := make([]byte, 2*12)
			for i := range 12 {
				binary.LittleEndian.PutUint16(raw[2*i:], uint16(math.Float32bits(float32(i)*0.37-2)>>16))
			}
			return b.FromBytes(raw, tensor.BFloat16, []int{3, 4})
		}},
		{name: "FromBytes/f16", dt: tensor.Float16, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			raw := make([]byte, 2*12)
			for i := range 12 {
				binary.LittleEndian.PutUint16(raw[2*i:], gocpu.F32ToF16(float32(i)*0.37-2))
			}
			return b.FromBytes(raw, tensor.Float16, []int{3, 4})
		}},
		{name: "FromBytes/f32", run: func(b tensor.Backend, g *gen) tensor.Tensor {
			raw := make([]byte, 4*6)
			for i := range 6 {
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i)/3))
			}
			return b.FromBytes(raw, tensor.Float32, []int{2, 3})
		}},
		{name: "FromBytes/int32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			raw := make([]byte, 4*6)
			for i := range 6 {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(i-3)))
			}
			return b.FromBytes(raw, tensor.Int32, []int{6})
		}},
		{name: "FromBool", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return g.B(3, 5) }},
		{name: "FromInt32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return g.I(100, 3, 5) }},
		{name: "Scalar/bf16", dt: tensor.BFloat16, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Scalar(math.Sqrt(3840), tensor.BFloat16) }},
		{name: "Scalar/f16", dt: tensor.Float16, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Scalar(math.Sqrt(2/math.Pi), tensor.Float16) }},
		{name: "Scalar/f32", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Scalar(0.044715, tensor.Float32) }},
		{name: "Scalar/int32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Scalar(-7, tensor.Int32) }},
		{name: "Zeros", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Zeros([]int{2, 3}, tensor.Float32) }},

		// Elementwise, broadcasting.
		{name: "Add", atol: f32Tol, run: bin(func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor { return b.Add }, []int{2, 3, 4}, []int{4})},
		{name: "Sub", atol: f32Tol, run: bin(func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor { return b.Sub }, []int{2, 1, 4}, []int{3, 1})},
		{name: "Mul", atol: f32Tol, run: bin(func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor { return b.Mul }, []int{3, 4}, []int{2, 3, 4})},
		{name: "Div", rtol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Div(g.F(2, 3, 4), g.In(0.5, 2, 3, 1)) }},
		{name: "Maximum", run: bin(func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor { return b.Maximum }, []int{2, 3, 4}, []int{3, 4})},
		{name: "Minimum", run: bin(func(b tensor.Backend) func(x, y tensor.Tensor) tensor.Tensor { return b.Minimum }, []int{2, 3, 4}, []int{1, 4})},
		{name: "Pow", rtol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Pow(g.In(0.1, 3, 3, 5), g.F(5)) }},
		{name: "Pow/int exponent", rtol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Pow(g.F(3, 5), b.Scalar(3, tensor.Float32)) }},
		{name: "Equal", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Equal(g.Small(4, 5), g.Small(5)) }},
		{name: "Less", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Less(g.Small(4, 5), g.Small(4, 1)) }},
		{name: "LogicalAnd", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.LogicalAnd(g.B(4, 5), g.B(5)) }},
		{name: "LogicalOr", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.LogicalOr(g.B(4, 5), g.B(4, 1)) }},
		{name: "Where", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Where(g.B(3, 4), g.F(3, 4), g.F(4)) }},
		{name: "Where/int32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Where(g.B(6), g.I(9, 6), b.Scalar(0, tensor.Int32))
		}},
		{name: "Tanh", atol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Tanh }, -4, 4)},
		{name: "Exp", rtol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Exp }, -10, 10)},
		{name: "Log", atol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Log }, 0.01, 100)},
		{name: "Sin", atol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Sin }, -10, 10)},
		{name: "Cos", atol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Cos }, -10, 10)},
		{name: "Sqrt", rtol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Sqrt }, 0, 100)},
		{name: "Rsqrt", rtol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Rsqrt }, 0.01, 100)},
		{name: "Sigmoid", atol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Sigmoid }, -20, 20)},
		{name: "Softplus", atol: f32Tol, rtol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Softplus }, -20, 20)},
		{name: "GeluTanh", atol: f32Tol, rtol: f32Tol, run: un(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.GeluTanh }, -6, 6)},
		{name: "AsType/bf16", dt: tensor.BFloat16, rtol: bf16Rel / 2, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.AsType(g.F(4, 5), tensor.BFloat16) }},
		{name: "AsType/int32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.AsType(b.Mul(g.F(4, 5), b.Scalar(10, tensor.Float32)), tensor.Int32)
		}},
		{name: "AsType/bool", dt: tensor.Bool, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.AsType(g.Small(4, 5), tensor.Bool) }},
		// bf16 arithmetic stays bf16 with bf16 scalars (MLX's weak-scalar rule).
		{name: "Mul/bf16 scalar", dt: tensor.BFloat16, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Mul(g.BF(4, 5), b.Scalar(math.Sqrt(3840), tensor.BFloat16))
		}},
		{name: "Mul/bf16*f32 promotes", rtol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Mul(g.BF(4, 5), b.Scalar(math.Sqrt(3840), tensor.Float32))
		}},
		{name: "Add/bf16", dt: tensor.BFloat16, atol: 0.02, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Add(g.BF(4, 5), g.BF(5)) }},
		{name: "Tanh/bf16", dt: tensor.BFloat16, rtol: bf16Rel, run: unBF(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Tanh })},
		{name: "Exp/bf16", dt: tensor.BFloat16, rtol: bf16Rel, run: unBF(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Exp })},
		{name: "GeluTanh/bf16", dt: tensor.BFloat16, atol: 0.03, rtol: bf16Rel, run: unBF(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.GeluTanh })},
		{name: "Softplus/bf16", dt: tensor.BFloat16, atol: 0.01, rtol: bf16Rel, run: unBF(func(b tensor.Backend) func(x tensor.Tensor) tensor.Tensor { return b.Softplus })},

		// Shape.
		{name: "Reshape", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Reshape(g.F(2, 3, 4), 4, -1) }},
		{name: "Transpose", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Transpose(g.F(2, 3, 4), 2, 0, 1) }},
		{name: "Transpose/then add", atol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Add(b.Transpose(g.F(2, 3, 4), 0, 2, 1), g.F(3)) }},
		{name: "Slice", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Slice(g.F(2, 5, 4), 1, 1, 4) }},
		{name: "Slice/last axis", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Slice(g.F(2, 5, 4), -1, 2, 4) }},
		{name: "Concat", run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Concat(1, g.F(2, 3, 4), g.F(2, 1, 4), g.F(2, 2, 4))
		}},
		{name: "SliceUpdate", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.SliceUpdate(g.F(2, 5, 4), g.F(2, 2, 4), 1, 3) }},
		{name: "SliceUpdate/bf16", dt: tensor.BFloat16, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.SliceUpdate(g.BF(1, 2, 6, 4), g.BF(1, 2, 1, 4), 2, 0)
		}},
		{name: "Pad", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Pad(g.F(2, 3, 4), 1, 1, 2, -1.5) }},
		{name: "Pad/last axis", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Pad(g.F(2, 3), -1, 0, 3, 0) }},
		{name: "Take/axis 0", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Take(g.F(5, 4), g.I(5, 2, 3), 0) }},
		{name: "Take/axis 1", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Take(g.F(3, 5, 2), g.I(5, 4), 1) }},
		{name: "TakeAlong", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.TakeAlong(g.F(3, 5), g.I(5, 3, 2), 1) }},

		// Reductions and sorting.
		{name: "Sum", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Sum(g.F(2, 7, 3), 1, false) }},
		{name: "Sum/keepdims", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Sum(g.F(2, 7, 3), -1, true) }},
		{name: "Mean", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Mean(g.F(2, 7, 3), 1, true) }},
		{name: "Max", run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Max(g.F(2, 7, 3), 1, false) }},
		{name: "Argmax", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Argmax(g.F(4, 9), -1) }},
		{name: "Argmax/ties first", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Argmax(g.Small(6, 9), 1) }},
		{name: "Softmax", atol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Softmax(b.Mul(g.F(3, 11), b.Scalar(5, tensor.Float32)), -1)
		}},
		{name: "Softmax/axis 0", atol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Softmax(g.F(5, 3), 0) }},
		{name: "Softmax/bf16", dt: tensor.BFloat16, atol: 1e-3, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Softmax(g.BF(3, 11), -1) }},
		{name: "LogSumExp", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.LogSumExp(b.Mul(g.F(3, 11), b.Scalar(20, tensor.Float32)), -1, false)
		}},
		{name: "LogSumExp/keepdims", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.LogSumExp(g.F(3, 11), 0, true) }},
		{name: "Argsort", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Argsort(g.F(3, 10), -1) }},
		{name: "Argsort/axis 0", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Argsort(g.F(6, 3), 0) }},
		// ArgPartition's order within each side is unspecified: compare
		// [max(left), kth value, min(right)], which any valid partition fixes.
		{name: "ArgPartition", run: func(b tensor.Backend, g *gen) tensor.Tensor {
			x := g.F(4, 12)
			const kth = 8
			p := b.TakeAlong(x, b.ArgPartition(x, kth, -1), -1)
			left := b.Max(b.Slice(p, 1, 0, kth), 1, true)
			mid := b.Slice(p, 1, kth, kth+1)
			neg := b.Mul(b.Slice(p, 1, kth+1, 12), b.Scalar(-1, tensor.Float32))
			right := b.Mul(b.Max(neg, 1, true), b.Scalar(-1, tensor.Float32))
			return b.Concat(1, left, mid, right)
		}},
		{name: "Cumsum", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Cumsum(g.F(3, 9), 1) }},
		{name: "Cumsum/int32", dt: tensor.Int32, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Cumsum(g.I(5, 3, 9), -1) }},

		// Neural-network ops.
		{name: "MatMul", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.MatMul(g.F(2, 3, 4, 5), g.F(5, 6)) }},
		{name: "MatMul/batch broadcast", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.MatMul(g.F(2, 1, 4, 5), g.F(3, 5, 2)) }},
		{name: "MatMul/bf16", dt: tensor.BFloat16, atol: 0.05, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.MatMul(g.BF(3, 16), g.BF(16, 5)) }},
		{name: "Linear/dense", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.F(2, 3, 16), g.Dense(0, 8, 16, false, tensor.Float32))
		}},
		{name: "Linear/dense+bias", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.F(2, 3, 16), g.Dense(0, 8, 16, true, tensor.Float32))
		}},
		{name: "Linear/q4", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.F(2, 3, 128), g.Quant(0, 8, 128, 4, 64, false, tensor.Float32))
		}},
		{name: "Linear/q4 gs32+bias", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.F(5, 64), g.Quant(0, 16, 64, 4, 32, true, tensor.Float32))
		}},
		{name: "Linear/q8", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.F(1, 2, 128), g.Quant(0, 8, 128, 8, 64, false, tensor.Float32))
		}},
		{name: "Linear/q4 bf16", dt: tensor.BFloat16, atol: 0.05, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Linear(g.BF(2, 128), g.Quant(0, 8, 128, 4, 64, false, tensor.BFloat16))
		}},
		{name: "GatherLinear/dense", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.GatherLinear(g.F(3, 1, 16), g.Dense(4, 8, 16, false, tensor.Float32), g.I(4, 3, 2))
		}},
		{name: "GatherLinear/dense K", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.GatherLinear(g.F(3, 2, 16), g.Dense(4, 8, 16, true, tensor.Float32), g.I(4, 3, 2))
		}},
		{name: "GatherLinear/q4", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.GatherLinear(g.F(3, 1, 64), g.Quant(4, 8, 64, 4, 32, false, tensor.Float32), g.I(4, 3, 2))
		}},
		{name: "GatherLinear/q8 K", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.GatherLinear(g.F(2, 3, 64), g.Quant(5, 8, 64, 8, 64, false, tensor.Float32), g.I(5, 2, 3))
		}},
		{name: "Embedding/dense", run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Embedding(g.Dense(0, 10, 6, false, tensor.Float32), g.I(10, 2, 3))
		}},
		{name: "Embedding/q4", atol: f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Embedding(g.Quant(0, 10, 64, 4, 32, false, tensor.Float32), g.I(10, 2, 3))
		}},
		{name: "Embedding/q8 bf16", dt: tensor.BFloat16, rtol: bf16Rel, atol: 1e-3, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Embedding(g.Quant(0, 10, 64, 8, 64, false, tensor.BFloat16), g.I(10, 4))
		}},
		{name: "RMSNorm", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.RMSNorm(g.F(2, 3, 32), g.F(32), 1e-6) }},
		{name: "RMSNorm/no weight", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.RMSNorm(g.F(3, 32), nil, 1e-6) }},
		{name: "RMSNorm/bf16", dt: tensor.BFloat16, atol: 0.02, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.RMSNorm(g.BF(3, 32), g.BF(32), 1e-6) }},
		{name: "LayerNorm", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.LayerNorm(g.F(2, 3, 32), g.F(32), g.F(32), 1e-5)
		}},
		{name: "LayerNorm/no affine", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.LayerNorm(g.F(3, 32), nil, nil, 1e-5) }},
		{name: "RoPE", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.RoPE(g.F(1, 2, 5, 16), 16, false, 10000, 1, 3, nil)
		}},
		{name: "RoPE/traditional", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.RoPE(g.F(2, 2, 4, 16), 16, true, 10000, 1, 7, nil)
		}},
		{name: "RoPE/partial scaled", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.RoPE(g.F(1, 3, 4, 16), 8, false, 500, 0.5, 11, nil)
		}},
		{name: "RoPE/freqs with +Inf", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			fr := make([]float32, 8)
			for i := range fr {
				fr[i] = float32(math.Inf(1))
				if i < 3 {
					fr[i] = float32(math.Pow(1e6, float64(2*i)/16))
				}
			}
			return b.RoPE(g.F(1, 2, 5, 16), 16, false, 0, 1, 40, b.FromFloat32(fr, []int{8}, tensor.Float32))
		}},
		{name: "RoPE/bf16", dt: tensor.BFloat16, atol: 0.03, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.RoPE(g.BF(1, 2, 5, 16), 16, false, 10000, 1, 3, nil)
		}},
		{name: "SDPA", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.SDPA(g.F(1, 4, 3, 8), g.F(1, 2, 6, 8), g.F(1, 2, 6, 8), 0.35, tensor.Mask{})
		}},
		{name: "SDPA/causal", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.SDPA(g.F(2, 4, 3, 8), g.F(2, 2, 6, 8), g.F(2, 2, 6, 8), 1, tensor.Mask{Kind: tensor.MaskCausal})
		}},
		{name: "SDPA/array", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			q, k, v := g.F(1, 4, 3, 8), g.F(1, 4, 6, 8), g.F(1, 4, 6, 8)
			m := b.LogicalOr(g.B(3, 6), b.FromBool([]bool{false, false, false, false, false, true}, []int{6}))
			return b.SDPA(q, k, v, 0.5, tensor.Mask{Kind: tensor.MaskArray, Array: m})
		}},
		{name: "SDPA/decode hd64", atol: 4 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.SDPA(g.F(1, 8, 1, 64), g.F(1, 2, 9, 64), g.F(1, 2, 9, 64), 0.125, tensor.Mask{})
		}},
		{name: "SDPA/bf16 causal", dt: tensor.BFloat16, atol: 0.03, rtol: bf16Rel, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.SDPA(g.BF(1, 2, 4, 8), g.BF(1, 1, 4, 8), g.BF(1, 1, 4, 8), 1, tensor.Mask{Kind: tensor.MaskCausal})
		}},
		{name: "Conv1D", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Conv1D(g.F(2, 10, 4), g.F(6, 3, 4), 1, 1, 1) }},
		{name: "Conv1D/stride groups", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Conv1D(g.F(2, 11, 4), g.F(6, 3, 2), 2, 0, 2) }},
		{name: "Conv1D/depthwise", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor { return b.Conv1D(g.F(1, 9, 8), g.F(8, 5, 1), 1, 2, 8) }},
		{name: "Conv2D", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Conv2D(g.F(1, 6, 6, 3), g.F(4, 3, 3, 3), 1, 1, 1, 1)
		}},
		{name: "Conv2D/stride 2", atol: 8 * f32Tol, run: func(b tensor.Backend, g *gen) tensor.Tensor {
			return b.Conv2D(g.F(2, 7, 6, 2), g.F(3, 3, 3, 2), 2, 2, 0, 1)
		}},
	}
}

func caseSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// TestOpParity compares every op of tensor.Backend with the Go backend's
// plain float32 path on random inputs (Categorical: see TestCategorical).
func TestOpParity(t *testing.T) {
	mb := newBackend(t)
	gb := gocpu.New(gocpu.Options{Plain: true, Threads: 1})
	defer gb.Close()
	var summary strings.Builder
	defer func() { t.Logf("op parity, MLX vs gocpu plain:\n%s", summary.String()) }()
	for _, c := range parityCases() {
		t.Run(c.name, func(t *testing.T) {
			defer mb.Sweep()
			want := c.run(gb, &gen{gb, newRand(caseSeed(c.name))})
			if err := gb.Err(); err != nil {
				gb.ClearErr()
				t.Fatalf("go backend: %v", err)
			}
			got := c.run(mb, &gen{mb, newRand(caseSeed(c.name))})
			if err := mb.Eval(got); err != nil {
				mb.ClearErr()
				t.Fatal(err)
			}
			if !equalInts(got.Shape(), want.Shape()) {
				t.Fatalf("shape %v, go backend %v", got.Shape(), want.Shape())
			}
			if got.DType() != c.dt {
				t.Errorf("dtype %v, want %v", got.DType(), c.dt)
			}
			if !c.dt.IsFloat() {
				gi, err1 := mb.Int32s(got)
				wi, err2 := gb.Int32s(want)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !equalInts32(gi, wi) {
					t.Errorf("got %v\nwant %v", gi, wi)
				}
				fmt.Fprintf(&summary, "  %-26s %-8v exact\n", c.name, c.dt)
				return
			}
			gf, err1 := mb.Float32s(got)
			wf, err2 := gb.Float32s(want)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			d, worst := 0.0, -1
			for i := range wf {
				e := math.Abs(float64(gf[i]) - float64(wf[i]))
				if math.IsNaN(e) || e > c.atol+c.rtol*math.Abs(float64(wf[i])) {
					worst = i
				}
				if e > d || math.IsNaN(e) {
					d = e
				}
			}
			fmt.Fprintf(&summary, "  %-26s %-8v max|d| %-9.3g atol %-7.2g rtol %.2g\n", c.name, c.dt, d, c.atol, c.rtol)
			if worst >= 0 {
				t.Errorf("element %d: mlx %v, go %v (max diff %.3g)", worst, gf[worst], wf[worst], d)
			}
		})
	}
}

func equalInts(a, b []int) bool {
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

func equalInts32(a, b []int32) bool {
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
