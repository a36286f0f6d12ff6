//go:build !purego

package gocpu

// AVX-512 versions of the 4/8-bit matvec and the GEMM kernel
// (kernels_avx512_amd64.s); the rest of the set is AVX2. The 4-bit matvec
// reads x permuted with 16 lanes when K%128 == 0, else it is the AVX2 one.

var avx512Kernels = kernelSet{name: "avx512", nr: 32, prepQ4: prepQ4x16, q4dot: q4dot512, q8dot: q8dot512w,
	q4dotH: widenedQ(q4dot512), q8dotH: q8dotHAVX2, deq4: deq4AVX2,
	deq8: deq8AVX2, gemm: gemm512, dot: dotAVX2, exp: expAVX2,
	dotBF16: dotBF16AVX2, dotF16: dotF16AVX2, sum64: sum64AVX2, tanh: tanhAVX2, widenBF16: widenBF16AVX2, widenF16: widenF16AVX2}

//go:noescape
func q4dot512G(w *uint32, s, b, xp, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dot512S(w *uint32, s, b, xp, xs, y *float32, n, groups, gpb, nblk int, idx *int32)

//go:noescape
func q8dot512(w *uint32, s, b, x, xs, y *float32, n, groups, bpg int)

//go:noescape
func gemm6x32z(a *[6]*float32, b *float32, ldb, k int, c *float32)

//go:noescape
func gemm6x16z(a *[6]*float32, b *float32, ldb, k int, c *float32)

// q4spread[gpb/4] maps lane i of a 16-word block to its group, i·gpb/16.
var q4spread = [2][16]int32{
	{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
	{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
}

func prepQ4x16(x, xp []float32) {
	if len(x)%128 == 0 {
		permuteQ4(x, xp, 16)
	} else {
		permuteQ4(x, xp, 8)
	}
}

func q4dot512(w []uint32, s, b, xp, xs, y []float32, gs int) {
	n, K := len(y), len(xp)
	if n == 0 || K == 0 || K%128 != 0 {
		q4dotAVX2(w, s, b, xp, xs, y, gs)
		return
	}
	groups := K / gs
	if gs < 32 || gs&(gs-1) != 0 {
		panic("gocpu: q4dot layout")
	}
	_, _, _, _ = w[n*K/8-1], s[n*groups-1], b[n*groups-1], xs[groups-1]
	if gs >= 128 {
		q4dot512G(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gs/128)
		return
	}
	gpb := 128 / gs
	q4dot512S(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gpb, K/128, &q4spread[gpb/4][0])
}

func q8dot512w(w []uint32, s, b, x, xs, y []float32, gs int) {
	n, K := len(y), len(x)
	if n == 0 || K == 0 {
		clear(y)
		return
	}
	if gs%32 != 0 || K%gs != 0 {
		panic("gocpu: q8dot layout")
	}
	groups := K / gs
	_, _, _, _ = w[n*K/4-1], s[n*groups-1], b[n*groups-1], xs[groups-1]
	q8dot512(&w[0], &s[0], &b[0], &x[0], &xs[0], &y[0], n, groups, gs/32)
}

func gemm512(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut) {
	if k == 0 {
		*c = gemmOut{}
		return
	}
	p := rowStarts(a, k)
	if cols > 16 {
		_ = b[(k-1)*ldb+31]
		gemm6x32z(&p, &b[0], 4*ldb, k, &c[0])
	} else {
		_ = b[(k-1)*ldb+15]
		gemm6x16z(&p, &b[0], 4*ldb, k, &c[0])
	}
}
