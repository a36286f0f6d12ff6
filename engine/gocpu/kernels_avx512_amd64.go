//go:build !purego

package gocpu

// AVX-512 versions of the 4/8-bit matvecs (float32 and bfloat16 scales),
// the GEMM kernel (kernels_avx512_amd64.s, kernels_avx512_half_amd64.s)
// and the integer prefill's (kernels_int_bw_amd64.s); the rest of the set
// is AVX2. The 4-bit matvecs read x permuted with 16
// lanes when K%128 == 0, else they are the AVX2 ones.

var avx512Kernels = kernelSet{name: "avx512", nr: 32, prepQ4: prepQ4x16, q4dot: q4dot512, q8dot: q8dot512w,
	q4dotH: q4dot512H, q8dotH: q8dot512Hw, deq4: deq4AVX2,
	deq8: deq8AVX2, gemm: gemm512, dot: dotAVX2, exp: expAVX2,
	dotBF16: dotBF16AVX2, dotF16: dotF16AVX2, sum64: sum64AVX2, tanh: tanhAVX2, widenBF16: widenBF16AVX2, widenF16: widenF16AVX2, q4i8: q4i8BW, quant8: quant8AVX2,
	q4dotI8: q4dotI8AVX2w, q4dotI8F: q4dotI8FAVX2w, quantVec: quantizeVec512w}

// avx512VNNIKernels is the AVX-512 set with the integer prefill's products
// summed by VPDPBUSD (kernels_int_vnni_amd64.s); its results are the
// AVX-512 set's bit for bit. Its integer decode is the AVX2 kernel's ymm
// twin with VPDPBUSD (kernels_intdot_vnni_amd64.s): a 16-lane (zmm)
// decode kernel measured slower streaming weights from memory (2 threads,
// E2B-shaped, 7 pairs side by side: the AVX2 kernel 8-26 % more tokens/s),
// leading only on matrices that sit in cache.
var avx512VNNIKernels = func() kernelSet {
	k := avx512Kernels
	k.name, k.q4i8 = "avx512vnni", q4i8VNNI
	k.q4dotI8, k.q4dotI8F = q4dotI8VNNIw, q4dotI8FVNNIw
	return k
}()

//go:noescape
func q4dot512G(w *uint32, s, b, xp, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dot512S(w *uint32, s, b, xp, xs, y *float32, n, groups, gpb, nblk int, idx *int32)

//go:noescape
func q8dot512(w *uint32, s, b, x, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dot512GH(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dot512SH(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, gpb, nblk int, idx *int32)

//go:noescape
func q8dot512H(w *uint32, s, b *uint16, x, xs, y *float32, n, groups, bpg int)

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
	if len(xp)%128 != 0 {
		q4dotAVX2(w, s, b, xp, xs, y, gs)
		return
	}
	switch n, K, groups := qlayout(w, s, b, xp, xs, y, gs, 4); {
	case n == 0:
	case gs >= 128:
		q4dot512G(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gs/128)
	default:
		gpb := 128 / gs
		q4dot512S(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gpb, K/128, &q4spread[gpb/4][0])
	}
}

// q4dot512H is q4dot512 with bfloat16 scales and biases.
func q4dot512H(w []uint32, s, b []uint16, xp, xs, y []float32, gs int) {
	if len(xp)%128 != 0 {
		q4dotHAVX2(w, s, b, xp, xs, y, gs)
		return
	}
	switch n, K, groups := qlayout(w, s, b, xp, xs, y, gs, 4); {
	case n == 0:
	case gs >= 128:
		q4dot512GH(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gs/128)
	default:
		gpb := 128 / gs
		q4dot512SH(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gpb, K/128, &q4spread[gpb/4][0])
	}
}

func q8dot512w(w []uint32, s, b, x, xs, y []float32, gs int) {
	if n, _, groups := qlayout(w, s, b, x, xs, y, gs, 8); n > 0 {
		q8dot512(&w[0], &s[0], &b[0], &x[0], &xs[0], &y[0], n, groups, gs/32)
	}
}

func q8dot512Hw(w []uint32, s, b []uint16, x, xs, y []float32, gs int) {
	if n, _, groups := qlayout(w, s, b, x, xs, y, gs, 8); n > 0 {
		q8dot512H(&w[0], &s[0], &b[0], &x[0], &xs[0], &y[0], n, groups, gs/32)
	}
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
