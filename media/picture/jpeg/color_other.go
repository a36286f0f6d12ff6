//go:build !amd64 || purego

package jpeg

// No colour kernels on this platform or build: the Go loops run.
const hasColorKernels = false

// upsample16 is never called without colour kernels.
func upsample16(out, near, far *uint8, blocks int, even, odd int16) { panic("no colour kernels") }

// ycc16 is never called without colour kernels.
func ycc16(y, cb, cr, dr, dg, db *uint8, blocks int) { panic("no colour kernels") }
