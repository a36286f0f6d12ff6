//go:build (amd64 || arm64) && !purego

package gocpu

// q4i8Quarters runs a kernel of a 4×8 quarter (the AVX2, AVX-VNNI and
// NEON ones) on the block's four quarters: the kernel steps through the
// whole panel and tile, 64 bytes a step, reading its 4 rows and 8 columns.
func q4i8Quarters(k func(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int),
	p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	groups := q4i8Check(p, s, b, xq, d, xs, bpg, c, ldc)
	for _, q := range [4][2]int{{0, 0}, {0, 8}, {4, 0}, {4, 8}} {
		r, j := q[0], q[1]
		k(&p[j], &s[j], &b[j], &xq[8*r], &d[r], &xs[r], groups, bpg, &c[r*ldc+j], 4*ldc)
	}
}

// q4i8Check checks what the kernels read and write (see q4i8 on
// kernelSet) and returns the number of groups.
func q4i8Check(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) int {
	groups := len(s) / intCols
	blocks := groups * bpg
	if groups == 0 || bpg <= 0 || ldc < intCols {
		panic("gocpu: q4i8 layout")
	}
	_, _, _, _, _, _ = p[blocks*intBlock/8*intCols-1], b[intCols*groups-1], xq[blocks*intBlock*intRows-1], d[intRows*blocks-1], xs[intRows*groups-1], c[(intRows-1)*ldc+intCols-1]
	return groups
}
