// Package gocpu is the Go CPU backend: every op of tensor.Backend computed
// eagerly in float32. Its plain path (Options.Plain) is the op-by-op oracle
// for the MLX binding; the default path swaps in fast, parallel quantized
// kernels that are tested against the plain one.
package gocpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"perch/engine/tensor"
)

// IntMinWidth is the narrowest model (its hidden size) the engine runs on
// the int8 activations by default. Measured (gemma4's TestIntPrefillKL and
// TestIntDecodeKL, bench/llamacpp/README.md): on the E2B-shaped model
// (1536 wide) they move the next-token distribution less than llama.cpp's
// Q8_0 activations move it on the same weights, with the same top token
// everywhere; on the 64-wide test fixtures, where one row is two blocks
// of 32, the top token changes at 5-8 % of positions. Every published
// Gemma-4 is at least 1536 wide.
const IntMinWidth = 1024

// Options configure a Backend.
type Options struct {
	// Plain selects the simple reference kernels everywhere.
	Plain bool
	// Threads caps the worker count (0: GOMAXPROCS).
	Threads int
	// IntPrefill lets the fast path multiply 4-bit weights by int8
	// activations quantized per block of 32 (as llama.cpp's Q8_0) where a
	// Linear has more rows than a matvec takes: faster, and results move by
	// up to max|x|/254 per input (intgemm.go). Off, every op is the exact
	// float32 one the tests hold to the plain path.
	IntPrefill bool
	// IntDecode lets the fast path's matvecs (decode, up to matvecMaxRows
	// input rows) multiply 4-bit weights with bfloat16 or float32 scales
	// by x quantized to int8 per block of 32, as IntPrefill does
	// (intdot.go). Off, they are the exact float32 ones.
	IntDecode bool
	// MappedWeights reads quantized weights where the checkpoint maps them
	// instead of from copies in 2 MB pages (resident.go; Linux).
	MappedWeights bool
	// WidenHalf widens bf16/f16 data to float32 at load (twice the memory;
	// the layout before 2-byte storage, kept for comparison benchmarks).
	WidenHalf bool
}

// Backend implements tensor.Backend on the CPU in Go.
type Backend struct {
	opt     Options
	err     error
	pool    *pool
	peak    int64
	scratch scratch
	ints    intScratch  // the integer prefill's buffers (intgemm.go)
	attn    [][]float32 // sdpaFast's buffer per worker
	res     residentSet // quantized weights in 2 MB pages (resident.go)
	rope    ropeMemo    // a decode step's RoPE tables (rope_memo.go)
}

var _ tensor.Backend = (*Backend)(nil)

// New returns a Go backend.
func New(opt Options) *Backend {
	n := opt.Threads
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Backend{opt: opt, pool: newPool(n)}
}

// Lazy implements tensor.Backend: every op computes before it returns.
func (b *Backend) Lazy() bool { return false }

func (b *Backend) Name() string {
	if b.opt.Plain {
		return "go-plain"
	}
	return "go"
}

// Kernels names the inner loops b runs: "plain" (the reference kernels) or
// the fast path's set for this CPU ("avx512vnni", "avx512", "avx2", or "go" without
// assembly), so that tests can say which path they checked.
func (b *Backend) Kernels() string {
	if b.opt.Plain {
		return "plain"
	}
	return kern.name
}

// SetIntPrefill switches Options.IntPrefill (say, off for a training run
// on a backend that serves inference with it) and returns the old value.
func (b *Backend) SetIntPrefill(on bool) bool {
	old := b.opt.IntPrefill
	b.opt.IntPrefill = on
	return old
}

// SetIntDecode switches Options.IntDecode and returns the old value.
func (b *Backend) SetIntDecode(on bool) bool {
	old := b.opt.IntDecode
	b.opt.IntDecode = on
	return old
}

func (b *Backend) Err() error { return b.err }
func (b *Backend) ClearErr()  { b.err = nil }

var empty = &T{shape: []int{0}, dt: tensor.Float32}

// fail records the first error and returns an empty tensor.
func (b *Backend) fail(op string, format string, args ...any) tensor.Tensor {
	if b.err == nil {
		b.err = fmt.Errorf("go backend: %s: %s", op, fmt.Sprintf(format, args...))
	}
	return empty
}

// ok reports whether ops may run: no earlier error and every input is ours.
func (b *Backend) ok(op string, ts ...tensor.Tensor) bool {
	if b.err != nil {
		return false
	}
	for i, t := range ts {
		if _, isT := t.(*T); !isT {
			b.fail(op, "argument %d is %T, not a Go backend tensor", i, t)
			return false
		}
	}
	return true
}

func checkShape(shape []int) error {
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in %v", shape)
		}
	}
	return nil
}

func (b *Backend) FromFloat32(data []float32, shape []int, dt tensor.DType) tensor.Tensor {
	if !b.ok("FromFloat32") {
		return empty
	}
	if err := checkShape(shape); err != nil || numel(shape) != len(data) {
		return b.fail("FromFloat32", "%d values for shape %v", len(data), shape)
	}
	t := newF(shape...)
	copy(t.f, data)
	if dt == tensor.BFloat16 {
		for i, v := range t.f {
			t.f[i] = RoundBF16(v)
		}
	}
	return t
}

func (b *Backend) FromInt32(data []int32, shape []int) tensor.Tensor {
	if !b.ok("FromInt32") {
		return empty
	}
	if err := checkShape(shape); err != nil || numel(shape) != len(data) {
		return b.fail("FromInt32", "%d values for shape %v", len(data), shape)
	}
	t := newI(shape...)
	copy(t.i, data)
	return t
}

func (b *Backend) FromBool(data []bool, shape []int) tensor.Tensor {
	if !b.ok("FromBool") {
		return empty
	}
	if err := checkShape(shape); err != nil || numel(shape) != len(data) {
		return b.fail("FromBool", "%d values for shape %v", len(data), shape)
	}
	t := newB(shape...)
	copy(t.b, data)
	return t
}

// FromBytes converts safetensors bytes. Packed uint32 weights and 2-byte
// floats alias raw when it is aligned (raw then must outlive the tensor).
func (b *Backend) FromBytes(raw []byte, dt tensor.DType, shape []int) tensor.Tensor {
	if !b.ok("FromBytes") {
		return empty
	}
	if err := checkShape(shape); err != nil {
		return b.fail("FromBytes", "%v", err)
	}
	n := numel(shape)
	esize := map[tensor.DType]int{tensor.Float32: 4, tensor.BFloat16: 2, tensor.Float16: 2, tensor.Int32: 4, tensor.Uint32: 4, tensor.Bool: 1}[dt]
	if esize == 0 || len(raw) != n*esize {
		return b.fail("FromBytes", "%d bytes for %v %v", len(raw), dt, shape)
	}
	switch dt {
	case tensor.Float32:
		t := newF(shape...)
		for i := range t.f {
			t.f[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return t
	case tensor.BFloat16, tensor.Float16: // kept at 2 bytes (computed as float32)
		t := &T{shape: cloneShape(shape), dt: tensor.Float32, f16: dt == tensor.Float16}
		t.h = alias16(raw, n)
		if b.opt.WidenHalf {
			return t.wide()
		}
		return t
	case tensor.Int32:
		t := newI(shape...)
		for i := range t.i {
			t.i[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return t
	case tensor.Uint32:
		t := &T{shape: cloneShape(shape), dt: tensor.Uint32, loaded: true}
		if n > 0 && uintptr(unsafe.Pointer(&raw[0]))%4 == 0 && littleEndian {
			t.u = unsafe.Slice((*uint32)(unsafe.Pointer(&raw[0])), n)
		} else {
			t.u = make([]uint32, n)
			for i := range t.u {
				t.u[i] = binary.LittleEndian.Uint32(raw[4*i:])
			}
		}
		return t
	default: // Bool
		t := newB(shape...)
		for i := range t.b {
			t.b[i] = raw[i] != 0
		}
		return t
	}
}

// littleEndian: safetensors bytes can be aliased as host integers.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// alias16 views raw as n little-endian uint16 values (a copy when raw is
// unaligned or the host is big-endian).
func alias16(raw []byte, n int) []uint16 {
	if n == 0 {
		return []uint16{}
	}
	if uintptr(unsafe.Pointer(&raw[0]))%2 == 0 && littleEndian {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), n)
	}
	h := make([]uint16, n)
	for i := range h {
		h[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return h
}

func (b *Backend) Scalar(v float64, dt tensor.DType) tensor.Tensor {
	if !b.ok("Scalar") {
		return empty
	}
	switch dt {
	case tensor.Int32:
		t := newI()
		t.i[0] = int32(v)
		return t
	case tensor.Bool:
		t := newB()
		t.b[0] = v != 0
		return t
	case tensor.BFloat16:
		t := newF()
		t.f[0] = RoundBF16(float32(v))
		return t
	case tensor.Float16:
		t := newF()
		t.f[0] = F16ToF32(F32ToF16(float32(v)))
		return t
	}
	t := newF()
	t.f[0] = float32(v)
	return t
}

func (b *Backend) Zeros(shape []int, dt tensor.DType) tensor.Tensor {
	if !b.ok("Zeros") {
		return empty
	}
	if err := checkShape(shape); err != nil {
		return b.fail("Zeros", "%v", err)
	}
	switch dt {
	case tensor.Int32:
		return newI(shape...)
	case tensor.Bool:
		return newB(shape...)
	case tensor.Uint32:
		return &T{shape: cloneShape(shape), dt: tensor.Uint32, u: make([]uint32, numel(shape))}
	}
	return newF(shape...)
}

func (b *Backend) Eval(ts ...tensor.Tensor) error      { b.ok("Eval", ts...); return b.err }
func (b *Backend) AsyncEval(ts ...tensor.Tensor) error { return b.Eval(ts...) }

func (b *Backend) Float32s(x tensor.Tensor) ([]float32, error) {
	if !b.ok("Float32s", x) {
		return nil, b.err
	}
	t := x.(*T)
	if t.dt == tensor.Float32 && t.h == nil {
		return append([]float32(nil), t.f...), nil
	}
	return append([]float32(nil), asFloats(t)...), nil
}

func (b *Backend) Int32s(x tensor.Tensor) ([]int32, error) {
	if !b.ok("Int32s", x) {
		return nil, b.err
	}
	t := x.(*T)
	switch t.dt {
	case tensor.Int32:
		return append([]int32(nil), t.i...), nil
	case tensor.Uint32:
		out := make([]int32, len(t.u))
		for i, v := range t.u {
			out[i] = int32(v)
		}
		return out, nil
	case tensor.Bool:
		out := make([]int32, len(t.b))
		for i, v := range t.b {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	}
	f := asFloats(t)
	out := make([]int32, len(f))
	for i, v := range f {
		out[i] = int32(v)
	}
	return out, nil
}

// Memory: the garbage collector owns Go tensors; Pin/Unpin/Sweep only
// exist to satisfy the contract, and the accounting reads the Go heap
// plus the weights' resident copies (resident.go).
func (b *Backend) Pin(ts ...tensor.Tensor)                       {}
func (b *Backend) Unpin(ts ...tensor.Tensor)                     {}
func (b *Backend) Sweep(keep ...tensor.Tensor)                   {}
func (b *Backend) Mark() uint64                                  { return 0 }
func (b *Backend) SweepSince(mark uint64, keep ...tensor.Tensor) {}

func (b *Backend) ActiveMemory() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	n := int64(m.HeapInuse) + b.res.size()
	if n > b.peak {
		b.peak = n
	}
	return n
}

func (b *Backend) PeakMemory() int64 { b.ActiveMemory(); return b.peak }
func (b *Backend) ResetPeakMemory()  { b.peak = 0 }

func (b *Backend) Close() error {
	b.pool.close()
	b.res.release()
	return nil
}
