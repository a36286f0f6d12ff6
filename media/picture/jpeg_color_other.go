//go:build !amd64 || purego

package picture

const hasColorKernels = false

func upsample16(out, near, far *uint8, blocks int, even, odd int16) { panic("no colour kernels") }

func ycc16(y, cb, cr, dr, dg, db *uint8, blocks int) { panic("no colour kernels") }
