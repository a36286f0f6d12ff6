//go:build !amd64 || purego

package resample

// No vector kernels on this platform or build: the Go loops run.
const hasVectorKernels = false

// row is never called without vector kernels.
func (v *vecKernel) row(dst, src []uint8) { panic("resample: no vector kernel") }

// verticalVec is never called without vector kernels.
func verticalVec(dst, img []uint8, stride int, k []int32) { panic("resample: no vector kernel") }
