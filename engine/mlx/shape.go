package mlx

import "perch/engine/tensor"

// axis normalises a possibly negative axis of an ndim-array.
func (b *Backend) axis(op string, axis, ndim int) (int, bool) {
	if axis < 0 {
		axis += ndim
	}
	if axis < 0 || axis >= ndim {
		b.fail(op, "axis %d out of range for rank %d", axis, ndim)
		return 0, false
	}
	return axis, true
}

// Reshape gives x a new shape with the same size (one -1 is inferred).
func (b *Backend) Reshape(x tensor.Tensor, shape ...int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("reshape", x)
	if !ok {
		return b.empty
	}
	sh, _, ok := b.shapeArg("reshape", &b.scratchA, shape, true)
	if !ok {
		return b.empty
	}
	h, m := cReshape(hx, sh, b.s)
	return b.out("reshape", h, m)
}

// Transpose permutes x's axes (reverses them when perm is empty).
func (b *Backend) Transpose(x tensor.Tensor, perm ...int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	a, ok := b.arr("transpose", x)
	if !ok {
		return b.empty
	}
	nd := len(a.dims())
	if len(perm) == 0 {
		for i := range nd {
			b.scratchA[i] = int32(nd - 1 - i)
		}
	} else {
		if len(perm) > maxDims {
			b.fail("transpose", "rank %d exceeds %d", len(perm), maxDims)
			return b.empty
		}
		for i, p := range perm {
			b.scratchA[i] = int32(p)
		}
		nd = len(perm)
	}
	h, m := cTranspose(a.h, b.scratchA[:nd], b.s)
	return b.out("transpose", h, m)
}

// fullRange fills start/stop with the whole extent of dims.
func (b *Backend) fullRange(dims []int) (start, stop []int32) {
	for i, d := range dims {
		b.scratchA[i], b.scratchB[i] = 0, int32(d)
	}
	return b.scratchA[:len(dims)], b.scratchB[:len(dims)]
}

// Slice keeps [start, end) of axis (negative values count from the end, as
// in Python; out-of-range bounds are clipped).
func (b *Backend) Slice(x tensor.Tensor, axis, start, end int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	a, ok := b.arr("slice", x)
	if !ok {
		return b.empty
	}
	dims := a.dims()
	ax, ok := b.axis("slice", axis, len(dims))
	if !ok {
		return b.empty
	}
	lo, hi := b.fullRange(dims)
	lo[ax], hi[ax] = clampIndex(start, dims[ax]), clampIndex(end, dims[ax])
	if hi[ax] < lo[ax] {
		hi[ax] = lo[ax]
	}
	h, m := cSlice(a.h, lo, hi, b.s)
	return b.out("slice", h, m)
}

func clampIndex(i, n int) int32 {
	if i < 0 {
		i += n
	}
	return int32(max(0, min(i, n)))
}

// Concat joins xs along axis.
func (b *Backend) Concat(axis int, xs ...tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hs := b.args[:0]
	for _, x := range xs {
		h, ok := b.in("concatenate", x)
		if !ok {
			return b.empty
		}
		hs = append(hs, h)
	}
	h, m := cConcat(hs, axis, b.s)
	clear(hs)
	b.args = hs[:0]
	return b.out("concatenate", h, m)
}

// SliceUpdate writes src into dst at [start, start+src.shape[axis]) of axis.
func (b *Backend) SliceUpdate(dst, src tensor.Tensor, axis, start int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	d, ok1 := b.arr("slice update", dst)
	s, ok2 := b.arr("slice update", src)
	if !ok1 || !ok2 {
		return b.empty
	}
	dims := d.dims()
	ax, ok := b.axis("slice update", axis, len(dims))
	if !ok {
		return b.empty
	}
	if len(s.dims()) != len(dims) {
		b.fail("slice update", "src rank %d != dst rank %d", len(s.dims()), len(dims))
		return b.empty
	}
	if start < 0 {
		start += dims[ax]
	}
	n := s.dims()[ax]
	if start < 0 || start+n > dims[ax] {
		b.fail("slice update", "[%d, %d) out of range for axis %d of %v", start, start+n, axis, dims)
		return b.empty
	}
	lo, hi := b.fullRange(dims)
	lo[ax], hi[ax] = int32(start), int32(start+n)
	h, m := cSliceUpdate(d.h, s.h, lo, hi, b.s)
	return b.out("slice update", h, m)
}

// Pad pads axis with before/after copies of value (in x's dtype).
func (b *Backend) Pad(x tensor.Tensor, axis, before, after int, value float64) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	a, ok := b.arr("pad", x)
	if !ok {
		return b.empty
	}
	ax, ok := b.axis("pad", axis, len(a.dims()))
	if !ok {
		return b.empty
	}
	h, m := cPad(a.h, ax, before, after, value, b.s)
	return b.out("pad", h, m)
}

func (b *Backend) take(op string, x, idx tensor.Tensor, axis int, along bool) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in(op, x)
	hi, ok2 := b.in(op, idx)
	if !ok1 || !ok2 {
		return b.empty
	}
	h, m := cTake(hx, hi, axis, along, b.s)
	return b.out(op, h, m)
}

// Take gathers along axis: x.shape[:axis] + idx.shape + x.shape[axis+1:].
func (b *Backend) Take(x, idx tensor.Tensor, axis int) tensor.Tensor {
	return b.take("take", x, idx, axis, false)
}

// TakeAlong is NumPy's take_along_axis.
func (b *Backend) TakeAlong(x, idx tensor.Tensor, axis int) tensor.Tensor {
	return b.take("take along axis", x, idx, axis, true)
}

func (b *Backend) reduce(op string, code reduceOp, x tensor.Tensor, axis int, keep bool) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in(op, x)
	if !ok {
		return b.empty
	}
	h, m := cReduce(code, hx, axis, keep, b.s)
	return b.out(op, h, m)
}

func (b *Backend) Sum(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	return b.reduce("sum", opSum, x, axis, keepDims)
}

func (b *Backend) Mean(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	return b.reduce("mean", opMean, x, axis, keepDims)
}

func (b *Backend) Max(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	return b.reduce("max", opMax, x, axis, keepDims)
}

func (b *Backend) LogSumExp(x tensor.Tensor, axis int, keepDims bool) tensor.Tensor {
	return b.reduce("logsumexp", opLogSumExp, x, axis, keepDims)
}

// Softmax is MLX's precise softmax (float32 inside, x's dtype out).
func (b *Backend) Softmax(x tensor.Tensor, axis int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("softmax", x)
	if !ok {
		return b.empty
	}
	h, m := cSoftmax(hx, axis, b.s)
	return b.out("softmax", h, m)
}

// Cumsum is the inclusive cumulative sum along axis.
func (b *Backend) Cumsum(x tensor.Tensor, axis int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("cumsum", x)
	if !ok {
		return b.empty
	}
	h, m := cCumsum(hx, axis, b.s)
	return b.out("cumsum", h, m)
}

func (b *Backend) argOp(op string, code argOp, x tensor.Tensor, kth, axis int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in(op, x)
	if !ok {
		return b.empty
	}
	h, m := cArgOp(code, hx, kth, axis, b.s)
	return b.out(op, h, m)
}

// Argmax is the int32 index of the first maximum along axis (removed).
func (b *Backend) Argmax(x tensor.Tensor, axis int) tensor.Tensor {
	return b.argOp("argmax", opArgmax, x, 0, axis)
}

// Argsort is the int32 ascending order along axis.
func (b *Backend) Argsort(x tensor.Tensor, axis int) tensor.Tensor {
	return b.argOp("argsort", opArgsort, x, 0, axis)
}

// ArgPartition is MLX's argpartition, as int32.
func (b *Backend) ArgPartition(x tensor.Tensor, kth int, axis int) tensor.Tensor {
	return b.argOp("argpartition", opArgPartition, x, kth, axis)
}

// Categorical samples one int32 index per row of logits [.., V] with
// mlx.random.categorical and the key random.key(seed).
func (b *Backend) Categorical(logits tensor.Tensor, seed uint64) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("categorical", logits)
	if !ok {
		return b.empty
	}
	h, m := cCategorical(hx, seed, b.s)
	return b.out("categorical", h, m)
}
