//go:build !purego

package gocpu

//go:noescape
func panel16x8(dst, src *uint32, stride, steps int)

// panelWords16 moves the 16 rows packed[row0·words:] into the panel
// layout (p[16j+c] = row c's word j) by AVX2, or reports false where the
// CPU lacks AVX2 or words is not a multiple of 8.
func panelWords16(p, packed []uint32, row0, words int) bool {
	if !hasAVX2 || words == 0 || words%8 != 0 {
		return false
	}
	_, _ = p[intCols*words-1], packed[(row0+intCols)*words-1]
	panel16x8(&p[0], &packed[row0*words], 4*words, words/8)
	return true
}

//go:noescape
func t8x8(src *float32, ls int, dst *float32, ld int)

// transpose8x8 is transpose8 by AVX2 (two unpacks and a lane swap per
// pair of rows: the same values moved), or false where the CPU lacks it.
func transpose8x8(src []float32, ls int, dst []float32, ld int) bool {
	if !hasAVX2 {
		return false
	}
	_, _ = src[7*ls+7], dst[7*ld+7]
	t8x8(&src[0], 4*ls, &dst[0], 4*ld)
	return true
}
