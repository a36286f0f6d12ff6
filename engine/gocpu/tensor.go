package gocpu

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"perch/engine/tensor"
)

// T is the Go backend's tensor: row-major, contiguous. Every float dtype is
// computed as float32 (and so reports Float32); integers are int32, packed
// weights uint32, masks bool. Floats loaded from 2-byte checkpoint data
// stay 2 bytes (h: bfloat16, or IEEE half when f16 is set; f is nil) and
// are widened where they are read.
type T struct {
	shape []int
	dt    tensor.DType
	f     []float32
	h     []uint16
	f16   bool
	i     []int32
	u     []uint32
	b     []bool
	// loaded marks checkpoint data made by FromBytes (resident.go).
	loaded bool
	// wideMemo caches a small 2-byte tensor's widened floats for
	// readOnlyFloats (a *[]float32, set atomically; SliceUpdate clears it).
	wideMemo unsafe.Pointer
}

func (t *T) Shape() []int        { return t.shape }
func (t *T) DType() tensor.DType { return t.dt }

func (t *T) size() int { return numel(t.shape) }

func (t *T) String() string { return fmt.Sprintf("gocpu.T%v(%v)", t.shape, t.dt) }

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func cloneShape(s []int) []int { return append([]int(nil), s...) }

func newF(shape ...int) *T {
	return &T{shape: cloneShape(shape), dt: tensor.Float32, f: make([]float32, numel(shape))}
}

func newI(shape ...int) *T {
	return &T{shape: cloneShape(shape), dt: tensor.Int32, i: make([]int32, numel(shape))}
}

func newB(shape ...int) *T {
	return &T{shape: cloneShape(shape), dt: tensor.Bool, b: make([]bool, numel(shape))}
}

// strides of a row-major shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis, rank int) (int, error) {
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return 0, fmt.Errorf("axis out of range for rank %d", rank)
	}
	return axis, nil
}

// asFloats returns t's values as float32 (converting ints and bools).
func asFloats(t *T) []float32 {
	switch t.dt {
	case tensor.Int32:
		out := make([]float32, len(t.i))
		for k, v := range t.i {
			out[k] = float32(v)
		}
		return out
	case tensor.Bool:
		out := make([]float32, len(t.b))
		for k, v := range t.b {
			if v {
				out[k] = 1
			}
		}
		return out
	case tensor.Uint32:
		out := make([]float32, len(t.u))
		for k, v := range t.u {
			out[k] = float32(v)
		}
		return out
	}
	if t.h != nil {
		out := make([]float32, len(t.h))
		widen(out, t.h, t.f16)
		return out
	}
	return t.f
}

// memoMax bounds the tensors readOnlyFloats caches widened (norm weights
// and the like: read every token, a few KB each).
const memoMax = 1 << 16

// readOnlyFloats is asFloats for a caller that only reads the result: a
// small 2-byte tensor is widened once and the floats kept with it.
func readOnlyFloats(t *T) []float32 {
	if t.h == nil || len(t.h) > memoMax {
		return asFloats(t)
	}
	if p := atomic.LoadPointer(&t.wideMemo); p != nil {
		return *(*[]float32)(p)
	}
	f := asFloats(t)
	atomic.StorePointer(&t.wideMemo, unsafe.Pointer(&f))
	return f
}

// wide returns t with its floats in f (t itself unless stored at 2 bytes).
func (t *T) wide() *T {
	if t.h == nil {
		return t
	}
	return &T{shape: t.shape, dt: t.dt, f: asFloats(t)}
}
