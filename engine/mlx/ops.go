package mlx

import (
	"unsafe"

	"perch/engine/tensor"
)

// shapeArg copies shape into dst as int32, checking it.
func (b *Backend) shapeArg(op string, dst *[maxDims]int32, shape []int, allowInfer bool) ([]int32, int, bool) {
	if len(shape) > maxDims {
		b.fail(op, "rank %d exceeds %d", len(shape), maxDims)
		return nil, 0, false
	}
	n := 1
	for i, d := range shape {
		if d < 0 && !(allowInfer && d == -1) || d > 1<<31-1 {
			b.fail(op, "bad dimension %d in shape %v", d, shape)
			return nil, 0, false
		}
		dst[i] = int32(d)
		n *= d
	}
	return dst[:len(shape)], n, true
}

func (b *Backend) fromData(op string, p unsafe.Pointer, n int, shape []int, src, dst int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	sh, size, ok := b.shapeArg(op, &b.scratchA, shape, false)
	if !ok {
		return b.empty
	}
	if size != n {
		b.fail(op, "%d values for shape %v", n, shape)
		return b.empty
	}
	if n == 0 {
		p = nil
	}
	h, m := cFromData(p, sh, src, dst, b.s)
	return b.out(op, h, m)
}

// FromFloat32 copies data into a new array and converts it to dt.
func (b *Backend) FromFloat32(data []float32, shape []int, dt tensor.DType) tensor.Tensor {
	mdt, ok := toMLXDType(dt)
	if !ok {
		b.fail("from float32", "unknown dtype %v", dt)
		return b.empty
	}
	return b.fromData("from float32", unsafe.Pointer(unsafe.SliceData(data)), len(data), shape, mxFloat32, mdt)
}

// FromInt32 copies data into a new int32 array.
func (b *Backend) FromInt32(data []int32, shape []int) tensor.Tensor {
	return b.fromData("from int32", unsafe.Pointer(unsafe.SliceData(data)), len(data), shape, mxInt32, mxInt32)
}

// FromBool copies data into a new bool array.
func (b *Backend) FromBool(data []bool, shape []int) tensor.Tensor {
	return b.fromData("from bool", unsafe.Pointer(unsafe.SliceData(data)), len(data), shape, mxBool, mxBool)
}

// FromBytes copies little-endian raw bytes of dtype dt into a new array.
func (b *Backend) FromBytes(raw []byte, dt tensor.DType, shape []int) tensor.Tensor {
	mdt, ok := toMLXDType(dt)
	if !ok {
		b.fail("from bytes", "unknown dtype %v", dt)
		return b.empty
	}
	size := itemSize(dt)
	if len(raw)%size != 0 {
		b.fail("from bytes", "%d bytes is not a whole number of %v", len(raw), dt)
		return b.empty
	}
	return b.fromData("from bytes", unsafe.Pointer(unsafe.SliceData(raw)), len(raw)/size, shape, mdt, mdt)
}

// FromBytesCopies says FromBytes copies raw (mlx_array_new_data copies
// before it returns), so a loader may drop raw's pages (tensor.BytesCopier).
func (b *Backend) FromBytesCopies() bool { return true }

var _ tensor.BytesCopier = (*Backend)(nil)

// Scalar is a 0-d array holding v rounded to dt through float32, the way MLX
// casts a Python scalar.
func (b *Backend) Scalar(v float64, dt tensor.DType) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	mdt, ok := toMLXDType(dt)
	if !ok {
		b.fail("scalar", "unknown dtype %v", dt)
		return b.empty
	}
	h, m := cScalar(v, mdt, b.s)
	return b.out("scalar", h, m)
}

// Zeros is an array of zeros.
func (b *Backend) Zeros(shape []int, dt tensor.DType) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	mdt, ok := toMLXDType(dt)
	if !ok {
		b.fail("zeros", "unknown dtype %v", dt)
		return b.empty
	}
	sh, _, ok := b.shapeArg("zeros", &b.scratchA, shape, false)
	if !ok {
		return b.empty
	}
	h, m := cZeros(sh, mdt, b.s)
	return b.out("zeros", h, m)
}

// Eval computes ts and waits for them.
func (b *Backend) Eval(ts ...tensor.Tensor) error { return b.eval("eval", false, ts) }

// AsyncEval starts computing ts and returns at once.
func (b *Backend) AsyncEval(ts ...tensor.Tensor) error { return b.eval("async eval", true, ts) }

func (b *Backend) eval(op string, async bool, ts []tensor.Tensor) error {
	if b.err != nil || len(ts) == 0 {
		return b.err
	}
	hs := b.args[:0]
	for _, t := range ts {
		h, ok := b.in(op, t)
		if !ok {
			return b.err
		}
		hs = append(hs, h)
	}
	m := cEval(hs, async)
	clear(hs)
	b.args = hs[:0]
	if m != nil {
		b.failC(op, m)
	}
	return b.err
}

// Float32s evaluates t and copies it out as float32 (any dtype converts).
func (b *Backend) Float32s(t tensor.Tensor) ([]float32, error) {
	if b.err != nil {
		return nil, b.err
	}
	a, ok := b.arr("read float32", t)
	if !ok {
		return nil, b.err
	}
	out := make([]float32, tensor.Size(a))
	if m := cReadF32(a.h, out, b.s); m != nil {
		b.failC("read float32", m)
		return nil, b.err
	}
	return out, nil
}

// Int32s evaluates t and copies it out as int32 (any dtype converts).
func (b *Backend) Int32s(t tensor.Tensor) ([]int32, error) {
	if b.err != nil {
		return nil, b.err
	}
	a, ok := b.arr("read int32", t)
	if !ok {
		return nil, b.err
	}
	out := make([]int32, tensor.Size(a))
	if m := cReadI32(a.h, out, b.s); m != nil {
		b.failC("read int32", m)
		return nil, b.err
	}
	return out, nil
}

func (b *Backend) binary(op string, code binaryOp, x, y tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in(op, x)
	hy, ok2 := b.in(op, y)
	if !ok1 || !ok2 {
		return b.empty
	}
	h, m := cBinary(code, hx, hy, b.s)
	return b.out(op, h, m)
}

func (b *Backend) unary(op string, code unaryOp, x tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in(op, x)
	if !ok {
		return b.empty
	}
	h, m := cUnary(code, hx, b.s)
	return b.out(op, h, m)
}

func (b *Backend) Add(x, y tensor.Tensor) tensor.Tensor { return b.binary("add", opAdd, x, y) }
func (b *Backend) Sub(x, y tensor.Tensor) tensor.Tensor { return b.binary("subtract", opSub, x, y) }
func (b *Backend) Mul(x, y tensor.Tensor) tensor.Tensor { return b.binary("multiply", opMul, x, y) }
func (b *Backend) Div(x, y tensor.Tensor) tensor.Tensor { return b.binary("divide", opDiv, x, y) }
func (b *Backend) Maximum(x, y tensor.Tensor) tensor.Tensor {
	return b.binary("maximum", opMaximum, x, y)
}
func (b *Backend) Minimum(x, y tensor.Tensor) tensor.Tensor {
	return b.binary("minimum", opMinimum, x, y)
}
func (b *Backend) Pow(x, y tensor.Tensor) tensor.Tensor   { return b.binary("power", opPow, x, y) }
func (b *Backend) Equal(x, y tensor.Tensor) tensor.Tensor { return b.binary("equal", opEqual, x, y) }
func (b *Backend) Less(x, y tensor.Tensor) tensor.Tensor  { return b.binary("less", opLess, x, y) }
func (b *Backend) LogicalAnd(x, y tensor.Tensor) tensor.Tensor {
	return b.binary("logical and", opAnd, x, y)
}
func (b *Backend) LogicalOr(x, y tensor.Tensor) tensor.Tensor {
	return b.binary("logical or", opOr, x, y)
}
func (b *Backend) MatMul(x, y tensor.Tensor) tensor.Tensor { return b.binary("matmul", opMatMul, x, y) }

func (b *Backend) Tanh(x tensor.Tensor) tensor.Tensor    { return b.unary("tanh", opTanh, x) }
func (b *Backend) Exp(x tensor.Tensor) tensor.Tensor     { return b.unary("exp", opExp, x) }
func (b *Backend) Log(x tensor.Tensor) tensor.Tensor     { return b.unary("log", opLog, x) }
func (b *Backend) Sin(x tensor.Tensor) tensor.Tensor     { return b.unary("sin", opSin, x) }
func (b *Backend) Cos(x tensor.Tensor) tensor.Tensor     { return b.unary("cos", opCos, x) }
func (b *Backend) Sqrt(x tensor.Tensor) tensor.Tensor    { return b.unary("sqrt", opSqrt, x) }
func (b *Backend) Rsqrt(x tensor.Tensor) tensor.Tensor   { return b.unary("rsqrt", opRsqrt, x) }
func (b *Backend) Sigmoid(x tensor.Tensor) tensor.Tensor { return b.unary("sigmoid", opSigmoid, x) }

// Where selects a where cond is true, else b.
func (b *Backend) Where(cond, x, y tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hc, ok0 := b.in("where", cond)
	hx, ok1 := b.in("where", x)
	hy, ok2 := b.in("where", y)
	if !ok0 || !ok1 || !ok2 {
		return b.empty
	}
	h, m := cWhere(hc, hx, hy, b.s)
	return b.out("where", h, m)
}

// Softplus is MLX's nn.softplus, logaddexp(x, 0) with 0 in x's dtype.
func (b *Backend) Softplus(x tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	a, ok := b.arr("softplus", x)
	if !ok {
		return b.empty
	}
	c, ok := b.constants("softplus", int(a.mdt))
	if !ok {
		return b.empty
	}
	h, m := cBinary(opLogAddExp, a.h, c[5], b.s)
	return b.out("softplus", h, m)
}

// GeluTanh is MLX's nn.gelu_approx with every constant in x's dtype.
func (b *Backend) GeluTanh(x tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	a, ok := b.arr("gelu tanh", x)
	if !ok {
		return b.empty
	}
	c, ok := b.constants("gelu tanh", int(a.mdt))
	if !ok {
		return b.empty
	}
	h, m := cGeluTanh(a.h, (*[5]handle)(c[:5]), b.s)
	return b.out("gelu tanh", h, m)
}

// AsType converts x to dt.
func (b *Backend) AsType(x tensor.Tensor, dt tensor.DType) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("astype", x)
	if !ok {
		return b.empty
	}
	mdt, ok := toMLXDType(dt)
	if !ok {
		b.fail("astype", "unknown dtype %v", dt)
		return b.empty
	}
	h, m := cAsType(hx, mdt, b.s)
	return b.out("astype", h, m)
}
