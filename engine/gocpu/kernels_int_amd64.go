//go:build !purego

package gocpu

//go:noescape
func q4i8x4(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

//go:noescape
func q4i8x4vnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

// q4i8AVX2 and q4i8VNNI check what their kernel reads and writes (see q4i8
// on kernelSet).
func q4i8AVX2(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	q4i8Checked(q4i8x4, p, s, b, xq, d, xs, bpg, c, ldc)
}

func q4i8VNNI(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	q4i8Checked(q4i8x4vnni, p, s, b, xq, d, xs, bpg, c, ldc)
}

func q4i8Checked(k func(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int),
	p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := len(s) / 8
	blocks := groups * bpg
	if groups == 0 || bpg <= 0 {
		panic("gocpu: q4i8 layout")
	}
	_, _, _, _, _, _ = p[blocks*64-1], b[8*groups-1], xq[blocks*128-1], d[4*blocks-1], xs[4*groups-1], c[3*ldc+7]
	k(&p[0], &s[0], &b[0], &xq[0], &d[0], &xs[0], groups, bpg, &c[0], 4*ldc)
}
