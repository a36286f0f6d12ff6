//go:build !purego

package gocpu

// AVX2 loops over 2-byte floats and the bandwidth probe
// (kernels_half_amd64.s); F16C comes with
// every AVX2/FMA CPU.

//go:noescape
func dotRowsBF16(w *uint16, x, y *float32, n, k int)

//go:noescape
func dotRowsF16(w *uint16, x, y *float32, n, k int)

//go:noescape
func widenBF16x8(dst *float32, src *uint16, n int)

//go:noescape
func widenF16x8(dst *float32, src *uint16, n int)

func dotBF16AVX2(w []uint16, x, y []float32) { dotHalfAVX2(w, x, y, dotRowsBF16) }
func dotF16AVX2(w []uint16, x, y []float32)  { dotHalfAVX2(w, x, y, dotRowsF16) }

func dotHalfAVX2(w []uint16, x, y []float32, rows func(w *uint16, x, y *float32, n, k int)) {
	n, k := len(y), len(x)
	if n == 0 {
		return
	}
	if k == 0 {
		clear(y)
		return
	}
	_ = w[n*k-1]
	rows(&w[0], &x[0], &y[0], n, k)
}

func widenBF16AVX2(dst []float32, src []uint16) {
	n := len(dst) &^ 7
	if n > 0 {
		_ = src[n-1]
		widenBF16x8(&dst[0], &src[0], n)
	}
	widenBF16Go(dst[n:], src[n:])
}

func widenF16AVX2(dst []float32, src []uint16) {
	n := len(dst) &^ 7
	if n > 0 {
		_ = src[n-1]
		widenF16x8(&dst[0], &src[0], n)
	}
	widenF16Go(dst[n:], src[n:])
}

//go:noescape
func sum64x16(a *uint64, n int) uint64

func sum64AVX2(a []uint64) uint64 {
	n := len(a) &^ 15
	var s uint64
	if n > 0 {
		s = sum64x16(&a[0], n)
	}
	return s + sum64Go(a[n:])
}

//go:noescape
func q4dotG64H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dotG32H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups int)

//go:noescape
func q8dotH(w *uint32, s, b *uint16, x, xs, y *float32, n, groups, bpg int)

// q4dotHAVX2 is q4dotAVX2 with bfloat16 scales and biases.
func q4dotHAVX2(w []uint32, s, b []uint16, xp, xs, y []float32, gs int) {
	switch n, _, groups := qlayout(w, s, b, xp, xs, y, gs, 4); {
	case n == 0:
	case gs == 32:
		q4dotG32H(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups)
	default:
		q4dotG64H(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gs/64)
	}
}

// q8dotHAVX2 is q8dotAVX2 with bfloat16 scales and biases.
func q8dotHAVX2(w []uint32, s, b []uint16, x, xs, y []float32, gs int) {
	if n, _, groups := qlayout(w, s, b, x, xs, y, gs, 8); n > 0 {
		q8dotH(&w[0], &s[0], &b[0], &x[0], &xs[0], &y[0], n, groups, gs/32)
	}
}
