//go:build !purego

package gocpu

//go:noescape
func q4i8x4(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

//go:noescape
func q4i8x8bw(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

//go:noescape
func q4i8x8vnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

// q4i8AVX2 runs the AVX2 kernel on the block's four 4×8 quarters.
func q4i8AVX2(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	q4i8Quarters(q4i8x4, p, s, b, xq, d, xs, bpg, c, ldc)
}

// q4i8BW runs the AVX-512 (BW) kernel on the whole block.
func q4i8BW(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := q4i8Check(p, s, b, xq, d, xs, bpg, c, ldc)
	q4i8x8bw(&p[0], &s[0], &b[0], &xq[0], &d[0], &xs[0], groups, bpg, &c[0], 4*ldc)
}

// q4i8VNNI runs the AVX-512 VNNI kernel on the whole block.
func q4i8VNNI(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := q4i8Check(p, s, b, xq, d, xs, bpg, c, ldc)
	q4i8x8vnni(&p[0], &s[0], &b[0], &xq[0], &d[0], &xs[0], groups, bpg, &c[0], 4*ldc)
}

//go:noescape
func quant8x(x *float32, out *int8, d *float32, sums *int32, nblk int)

// quant8AVX2 checks what quant8x reads and writes (see quant8Go).
func quant8AVX2(x []float32, out []int8, d []float32, sums []int32) {
	n := len(sums)
	if n == 0 {
		return
	}
	_, _, _ = x[n*intBlock-1], out[((n*intBlock/8-1)*intRows)*8+7], d[(n-1)*intRows]
	quant8x(&x[0], &out[0], &d[0], &sums[0], n)
}
