// Package tensor is the small interface the model code is written against.
// Two backends implement it: MLX through mlx-c (engine/mlx: a lazy graph,
// on Metal on macOS, on the CPU on Linux) and a Go CPU backend
// (engine/gocpu: eager, float32, the op-by-op oracle for MLX).
//
// Semantics follow MLX (and so NumPy): shapes broadcast from the right, a
// result takes the promoted dtype of its inputs, and Scalar makes a 0-d
// tensor in a given dtype so that constants round the way MLX's weak Python
// scalars do (a bf16 model multiplies by bf16(sqrt(H)), not by sqrt(H)).
//
// Ops never return errors: the first failure is kept by the backend, every
// later op is a no-op returning an empty tensor, and Err/Eval/readback report
// it. Callers check once per step.
package tensor

import "fmt"

// DType is an element type.
type DType uint8

const (
	Float32 DType = iota
	BFloat16
	Float16
	Int32
	Uint32
	Bool
)

func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case BFloat16:
		return "bfloat16"
	case Float16:
		return "float16"
	case Int32:
		return "int32"
	case Uint32:
		return "uint32"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == BFloat16 || d == Float16 }

// ParseDType maps a safetensors dtype name to a DType.
func ParseDType(s string) (DType, bool) {
	switch s {
	case "F32":
		return Float32, true
	case "BF16":
		return BFloat16, true
	case "F16":
		return Float16, true
	case "I32":
		return Int32, true
	case "U32":
		return Uint32, true
	case "BOOL", "U8":
		return Bool, true
	}
	return 0, false
}

// Tensor is a backend's array. Backends only accept their own tensors.
type Tensor interface {
	Shape() []int
	DType() DType
}

// Size is the number of elements of t.
func Size(t Tensor) int {
	n := 1
	for _, d := range t.Shape() {
		n *= d
	}
	return n
}

// Linear is a weight matrix [Out, In], dense or MLX-affine quantized, with an
// optional bias. For MoE experts the weight has a leading expert axis
// [E, Out, In] (packed [E, Out, In*Bits/32]).
type Linear struct {
	W      Tensor // dense [.., Out, In], or packed uint32 [.., Out, In*Bits/32]
	Scales Tensor // quantized only: [.., Out, In/GroupSize]
	Biases Tensor // quantized only: [.., Out, In/GroupSize]
	Bias   Tensor // optional additive bias [Out]
	In     int
	Out    int
	// Bits is 0 for a dense weight, else 4 or 8 (MLX affine: w = q*scale + bias,
	// q unsigned, packed low bits first, groups contiguous along In).
	Bits      int
	GroupSize int
}

// Quantized reports whether l uses packed weights.
func (l *Linear) Quantized() bool { return l.Bits != 0 }

// MaskKind selects how attention is masked.
type MaskKind uint8

const (
	MaskNone   MaskKind = iota // every query sees every key
	MaskCausal                 // causal, aligned bottom-right: query i of L sees keys <= S-L+i
	MaskArray                  // Array: bool [L, S] (true = visible), broadcast over heads
)

// Mask is an attention mask.
type Mask struct {
	Kind  MaskKind
	Array Tensor
}

// Backend is one implementation of the ops. A backend is not safe for
// concurrent use: the engine calls it from one goroutine (MLX additionally
// needs one OS thread).
type Backend interface {
	Name() string
	// Lazy reports whether ops build a graph that evaluates later (MLX),
	// so that queueing step n+1 before reading token n pays off.
	Lazy() bool
	// Err is the first error any op hit since the last ClearErr.
	Err() error
	ClearErr()

	// Creation. FromFloat32 converts data to dt (a float type).
	FromFloat32(data []float32, shape []int, dt DType) Tensor
	FromInt32(data []int32, shape []int) Tensor
	FromBool(data []bool, shape []int) Tensor
	// FromBytes makes a tensor from raw little-endian safetensors bytes;
	// the backend may keep a reference to raw (it outlives the model).
	FromBytes(raw []byte, dt DType, shape []int) Tensor
	// Scalar is a 0-d tensor holding v rounded to dt.
	Scalar(v float64, dt DType) Tensor
	Zeros(shape []int, dt DType) Tensor

	// Evaluation and readback. Float32s converts any float dtype.
	Eval(ts ...Tensor) error
	AsyncEval(ts ...Tensor) error
	Float32s(t Tensor) ([]float32, error)
	Int32s(t Tensor) ([]int32, error)

	// Elementwise, broadcasting.
	Add(a, b Tensor) Tensor
	Sub(a, b Tensor) Tensor
	Mul(a, b Tensor) Tensor
	Div(a, b Tensor) Tensor
	Maximum(a, b Tensor) Tensor
	Minimum(a, b Tensor) Tensor
	Pow(a, b Tensor) Tensor
	Equal(a, b Tensor) Tensor // bool
	Less(a, b Tensor) Tensor  // bool
	LogicalAnd(a, b Tensor) Tensor
	LogicalOr(a, b Tensor) Tensor
	Where(cond, a, b Tensor) Tensor
	Tanh(x Tensor) Tensor
	Exp(x Tensor) Tensor
	Log(x Tensor) Tensor
	Sin(x Tensor) Tensor
	Cos(x Tensor) Tensor
	Sqrt(x Tensor) Tensor
	Rsqrt(x Tensor) Tensor
	Sigmoid(x Tensor) Tensor
	Softplus(x Tensor) Tensor // log(1 + e^x), as MLX's logaddexp(x, 0)
	// GeluTanh is 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), composed in
	// that order (MLX nn.gelu_approx), each step rounded to x's dtype.
	GeluTanh(x Tensor) Tensor
	AsType(x Tensor, dt DType) Tensor

	// Shape.
	Reshape(x Tensor, shape ...int) Tensor
	Transpose(x Tensor, perm ...int) Tensor
	Slice(x Tensor, axis, start, end int) Tensor
	Concat(axis int, xs ...Tensor) Tensor
	// SliceUpdate writes src into dst at [start, start+src.Shape[axis]) along
	// axis and returns the result; dst (and views of it) must not be used
	// afterwards (backends may update in place).
	SliceUpdate(dst, src Tensor, axis, start int) Tensor
	// Pad pads axis with before/after copies of value.
	Pad(x Tensor, axis, before, after int, value float64) Tensor
	// Take gathers along axis: out shape = x.shape[:axis] + idx.shape + x.shape[axis+1:].
	Take(x, idx Tensor, axis int) Tensor
	// TakeAlong gathers with idx of x's rank (NumPy take_along_axis).
	TakeAlong(x, idx Tensor, axis int) Tensor

	// Reductions and sorting along one axis (negative axes count from the end).
	Sum(x Tensor, axis int, keepDims bool) Tensor
	Mean(x Tensor, axis int, keepDims bool) Tensor
	Max(x Tensor, axis int, keepDims bool) Tensor
	Argmax(x Tensor, axis int) Tensor // int32, axis removed
	// Softmax computes in float32 and returns x's dtype (MLX precise softmax).
	Softmax(x Tensor, axis int) Tensor
	LogSumExp(x Tensor, axis int, keepDims bool) Tensor
	Argsort(x Tensor, axis int) Tensor               // int32, ascending
	ArgPartition(x Tensor, kth int, axis int) Tensor // int32
	Cumsum(x Tensor, axis int) Tensor
	// Categorical draws one index per row of logits [.., V] (unnormalised
	// log-probabilities), deterministically from seed.
	Categorical(logits Tensor, seed uint64) Tensor

	// Neural-network ops.
	MatMul(a, b Tensor) Tensor // batched, broadcasting leading dims
	// Linear is x @ W^T (+ bias); x [.., In] -> [.., Out].
	Linear(x Tensor, w *Linear) Tensor
	// GatherLinear applies expert idx[n, j] of an expert-stacked w to row n of
	// x: x [N, K or 1, In], idx int32 [N, K] -> [N, K, Out] (MoE).
	GatherLinear(x Tensor, w *Linear, idx Tensor) Tensor
	// LinearT is Linear's transpose without the bias: dy @ W, dy [.., Out]
	// -> [.., In] (the input gradient of a frozen, possibly quantized Linear;
	// quantized weights are never dequantized whole).
	LinearT(dy Tensor, w *Linear) Tensor
	// GatherLinearT is GatherLinear's transpose: dy [N, K, Out] -> [N, K, In],
	// row (n, j) times expert idx[n, j] of w (MoE input gradients).
	GatherLinearT(dy Tensor, w *Linear, idx Tensor) Tensor
	// Embedding takes rows ids of w and dequantizes them: ids [..] -> [.., In].
	Embedding(w *Linear, ids Tensor) Tensor
	// RMSNorm: x * rsqrt(mean(x^2) + eps) * w over the last axis; w may be nil.
	RMSNorm(x, w Tensor, eps float32) Tensor
	// LayerNorm over the last axis; w and b may be nil.
	LayerNorm(x, w, b Tensor, eps float32) Tensor
	// RoPE rotates x [B, H, L, D] (time on axis -2) at positions offset..,
	// half-split pairs (i, i+dims/2) unless traditional. freqs, when not nil,
	// gives dims/2 float32 frequencies (+Inf = identity) and base is unused;
	// else inv_freq[i] = base^(-2i/dims).
	RoPE(x Tensor, dims int, traditional bool, base, scale float32, offset int, freqs Tensor) Tensor
	// SDPA is softmax(q k^T * scale + mask) v with q [B, Hq, L, D],
	// k, v [B, Hkv, S, D] (Hq a multiple of Hkv; grouped-query attention).
	SDPA(q, k, v Tensor, scale float32, mask Mask) Tensor
	// Conv1D: x [B, T, Cin], w [Cout, K, Cin/groups] -> [B, T', Cout].
	Conv1D(x, w Tensor, stride, padding, groups int) Tensor
	// Conv2D: x [B, H, W, Cin] (NHWC), w [Cout, kH, kW, Cin] -> [B, H', W', Cout].
	Conv2D(x, w Tensor, strideH, strideW, padH, padW int) Tensor

	// Memory. Every tensor a backend hands out is freed by the next Sweep
	// unless it is pinned or passed in keep; weights and cache state are
	// pinned. A lazy backend keeps what a pending graph needs on its own, so
	// sweeping intermediates before evaluation is safe. The Go backend leaves
	// tensors to the garbage collector and only accounts.
	Pin(ts ...Tensor)
	Unpin(ts ...Tensor)
	Sweep(keep ...Tensor)
	// Mark and SweepSince bound the memory of one long computation (a
	// layer at a time): SweepSince frees the unpinned tensors made since
	// Mark, except keep.
	Mark() uint64
	SweepSince(mark uint64, keep ...Tensor)
	ActiveMemory() int64
	PeakMemory() int64
	ResetPeakMemory()
	// Close frees every tensor; the backend is unusable afterwards.
	Close() error
}

// BytesCopier is implemented by a backend whose FromBytes copies raw before
// it returns and keeps no reference to it (MLX). A loader may then drop
// raw's pages from memory; a backend that aliases raw (the Go backend's
// packed and 2-byte weights are the mapped file) does not implement it.
type BytesCopier interface {
	FromBytesCopies() bool
}

// CopiesBytes reports whether b's FromBytes copies (see BytesCopier).
func CopiesBytes(b Backend) bool {
	c, ok := b.(BytesCopier)
	return ok && c.FromBytesCopies()
}
