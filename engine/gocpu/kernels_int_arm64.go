//go:build !purego

package gocpu

// q4i8x4sdot is the integer prefill's kernel with SDOT
// (kernels_int_arm64.s); ldc in bytes.
//
//go:noescape
func q4i8x4sdot(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

// q4i8SDOT checks what q4i8x4sdot reads and writes (see q4i8 on
// kernelSet): len(s)/8 groups of bpg blocks, a 4×8 block of c.
func q4i8SDOT(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := len(s) / 8
	if groups == 0 || bpg <= 0 {
		panic("gocpu: q4i8 layout")
	}
	blocks := groups * bpg
	_, _, _, _, _, _ = p[blocks*64-1], b[8*groups-1], xq[blocks*128-1], d[4*blocks-1], xs[4*groups-1], c[3*ldc+7]
	q4i8x4sdot(&p[0], &s[0], &b[0], &xq[0], &d[0], &xs[0], groups, bpg, &c[0], 4*ldc)
}
