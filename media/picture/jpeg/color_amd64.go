//go:build !purego

package jpeg

import "golang.org/x/sys/cpu"

// AVX2 forms of the colour conversion's inner loops (color_amd64.s),
// the same integer arithmetic as the Go loops in color.go.

var hasColorKernels = cpu.X86.HasAVX2

// upsample16 writes outputs 2..2+32·blocks of a fancy-upsampled row:
// chroma columns 1..16·blocks, reading columns 0..16·blocks+1.
//
//go:noescape
func upsample16(out, near, far *uint8, blocks int, even, odd int16)

// ycc16 converts 16·blocks pixels to RGB planes; each block of 16 inputs is
// read before its outputs are written.
//
//go:noescape
func ycc16(y, cb, cr, dr, dg, db *uint8, blocks int)
