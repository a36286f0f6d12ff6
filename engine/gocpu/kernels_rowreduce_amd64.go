//go:build !purego

package gocpu

//go:noescape
func max8(x *float32, n int) (m float32, nan bool)

//go:noescape
func firstEq8(x *float32, n int, v float32) int

//go:noescape
func sum8(x *float32, n int, a *[8]float32)

// argmaxRow8 is argmaxRow by AVX2 in two passes, the largest value and
// then its first index, or ok false where the CPU lacks AVX2, the row is
// short or holds a NaN (whose rule argmaxRow's loop keeps).
func argmaxRow8(x []float32) (j int, ok bool) {
	m, ok := maxRow8(x)
	if !ok {
		return 0, false
	}
	n := len(x) &^ 7
	if j = firstEq8(&x[0], n, m); j >= 0 {
		return j, true
	}
	for j = n; x[j] != m; j++ {
	}
	return j, true
}

// maxRow8 is the largest value of x by AVX2, or ok false where the CPU
// lacks AVX2, the row is short or holds a NaN (the caller's loop decides).
func maxRow8(x []float32) (m float32, ok bool) {
	n := len(x) &^ 7
	if n < 64 || !hasAVX2 {
		return 0, false
	}
	m, nan := max8(&x[0], n)
	for _, v := range x[n:] {
		nan = nan || v != v
		m = max(m, v)
	}
	return m, !nan
}

// sumRow8 adds x[:len(x)&^7] into sumRow's eight sums a by AVX2 and
// returns how many values it took.
func sumRow8(x []float32, a *[8]float32) int {
	n := len(x) &^ 7
	if n == 0 || !hasAVX2 {
		return 0
	}
	sum8(&x[0], n, a)
	return n
}
