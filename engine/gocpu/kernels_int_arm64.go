//go:build !purego

package gocpu

// q4i8x4sdot is the integer prefill's 4×8 quarter kernel with SDOT
// (kernels_int_arm64.s); ldc in bytes.
//
//go:noescape
func q4i8x4sdot(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

// q4i8SDOT runs the SDOT kernel on the block's four quarters (see q4i8 on
// kernelSet).
func q4i8SDOT(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	q4i8Quarters(q4i8x4sdot, p, s, b, xq, d, xs, bpg, c, ldc)
}
