package mlx

import (
	"fmt"

	"perch/engine/tensor"
)

// Array is an MLX array handle owned by a Backend. It stays valid until a
// Sweep that neither keeps nor finds it pinned, or until Close.
type Array struct {
	h      handle
	b      *Backend
	slot   int32 // index in b.live or b.pinned
	pinned bool
	empty  bool   // the placeholder ops return after an error
	mark   uint64 // == b.epoch while a Sweep keeps it
	seq    uint64 // creation order, for SweepSince
	ndim   int16  // -1 until the metadata is read
	mdt    int16  // mlx dtype
	shape  []int
}

// UnknownDType is what DType reports for an MLX dtype outside tensor.DType
// (uint8, int64, float64, ...), e.g. from LoadSafetensors.
const UnknownDType tensor.DType = 255

// maxDims bounds the rank of arrays this package handles.
const maxDims = 32

// Shape returns a copy of the array's shape (nil for a freed or empty array).
func (a *Array) Shape() []int {
	d := a.dims()
	if d == nil {
		return nil
	}
	return append([]int(nil), d...)
}

// DType is the array's element type.
func (a *Array) DType() tensor.DType {
	if a.dims() == nil {
		return UnknownDType
	}
	return fromMLXDType(int(a.mdt))
}

func (a *Array) String() string {
	if a.dims() == nil {
		return "mlx.Array(freed)"
	}
	return fmt.Sprintf("mlx.Array(%v %v)", a.dims(), a.DType())
}

// dims returns the cached shape, reading it from MLX on first use; callers
// must not modify it.
func (a *Array) dims() []int {
	if a == nil || isNull(a.h) {
		return nil
	}
	if a.ndim >= 0 {
		return a.shape
	}
	var buf [maxDims]int32
	nd, dt := cMeta(a.h, buf[:])
	if nd > maxDims {
		nd = maxDims // never produced by the ops here
	}
	a.shape = make([]int, nd)
	for i := range a.shape {
		a.shape[i] = int(buf[i])
	}
	a.ndim, a.mdt = int16(nd), int16(dt)
	return a.shape
}

func toMLXDType(dt tensor.DType) (int, bool) {
	switch dt {
	case tensor.Float32:
		return mxFloat32, true
	case tensor.BFloat16:
		return mxBFloat16, true
	case tensor.Float16:
		return mxFloat16, true
	case tensor.Int32:
		return mxInt32, true
	case tensor.Uint32:
		return mxUint32, true
	case tensor.Bool:
		return mxBool, true
	}
	return 0, false
}

func fromMLXDType(m int) tensor.DType {
	switch m {
	case mxFloat32:
		return tensor.Float32
	case mxBFloat16:
		return tensor.BFloat16
	case mxFloat16:
		return tensor.Float16
	case mxInt32:
		return tensor.Int32
	case mxUint32:
		return tensor.Uint32
	case mxBool:
		return tensor.Bool
	}
	return UnknownDType
}

func itemSize(dt tensor.DType) int {
	switch dt {
	case tensor.Float32, tensor.Int32, tensor.Uint32:
		return 4
	case tensor.BFloat16, tensor.Float16:
		return 2
	}
	return 1
}
