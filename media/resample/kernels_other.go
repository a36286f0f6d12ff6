//go:build !amd64 || purego

package resample

const hasVectorKernels = false

func (v *vecKernel) row(dst, src []uint8) { panic("resample: no vector kernel") }

func verticalVec(dst, img []uint8, stride int, k []int32) { panic("resample: no vector kernel") }
