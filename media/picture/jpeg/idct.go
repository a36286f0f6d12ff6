package jpeg

import "encoding/binary"

// The integer "islow" inverse DCT that libjpeg and libjpeg-turbo use by
// default: the Loeffler–Ligtenberg–Moschytz butterfly with 13-bit constants,
// columns first (results kept with 2 extra bits), then rows, each rounded once
// by a shift. Each output is an integer linear function of the inputs before
// its shift, so skipping zero inputs (the sparse paths) cannot change a sample.

const (
	idctConstBits = 13
	idctPass1Bits = 2
	pass1Shift    = idctConstBits - idctPass1Bits     // 11
	pass2Shift    = idctConstBits + idctPass1Bits + 3 // 18

	// round(x · 2^13) for the butterfly's cosines.
	fix0_298631336 = 2446
	fix0_390180644 = 3196
	fix0_541196100 = 4433
	fix0_765366865 = 6270
	fix0_899976223 = 7373
	fix1_175875602 = 9633
	fix1_501321110 = 12299
	fix1_847759065 = 15137
	fix1_961570560 = 16069
	fix2_053119869 = 16819
	fix2_562915447 = 20995
	fix3_072711026 = 25172
)

// idct8 is the 1-D butterfly on eight inputs; outputs are scaled by 2^13,
// offset by bias and not yet shifted.
func idct8(bias, i0, i1, i2, i3, i4, i5, i6, i7 int32) (o0, o1, o2, o3, o4, o5, o6, o7 int32) {
	// Even part.
	z1 := (i2 + i6) * fix0_541196100
	t2 := z1 - i6*fix1_847759065
	t3 := z1 + i2*fix0_765366865
	t0 := (i0+i4)<<idctConstBits + bias
	t1 := (i0-i4)<<idctConstBits + bias
	t10, t13 := t0+t3, t0-t3
	t11, t12 := t1+t2, t1-t2
	// Odd part.
	z1, z2, z3, z4 := i7+i1, i5+i3, i7+i3, i5+i1
	z5 := (z3 + z4) * fix1_175875602
	z1 *= -fix0_899976223
	z2 *= -fix2_562915447
	z3 = z3*-fix1_961570560 + z5
	z4 = z4*-fix0_390180644 + z5
	u0 := i7*fix0_298631336 + z1 + z3
	u1 := i5*fix2_053119869 + z2 + z4
	u2 := i3*fix3_072711026 + z2 + z3
	u3 := i1*fix1_501321110 + z1 + z4
	return t10 + u3, t11 + u2, t12 + u1, t13 + u0, t13 - u0, t12 - u1, t11 - u2, t10 - u3
}

// idct4 is idct8 with inputs 4..7 zero.
func idct4(bias, i0, i1, i2, i3 int32) (o0, o1, o2, o3, o4, o5, o6, o7 int32) {
	z1 := i2 * fix0_541196100
	t3 := z1 + i2*fix0_765366865
	t0 := i0<<idctConstBits + bias
	t10, t13 := t0+t3, t0-t3
	t11, t12 := t0+z1, t0-z1
	z5 := (i3 + i1) * fix1_175875602
	a := i1 * -fix0_899976223
	b := i3 * -fix2_562915447
	c := i3*-fix1_961570560 + z5
	d := i1*-fix0_390180644 + z5
	u0 := a + c
	u1 := b + d
	u2 := i3*fix3_072711026 + b + c
	u3 := i1*fix1_501321110 + a + d
	return t10 + u3, t11 + u2, t12 + u1, t13 + u0, t13 - u0, t12 - u1, t11 - u2, t10 - u3
}

// Every output of the butterfly holds its t0 or t1 once, so a bias there
// is the rounding (and, in pass 2, the +128 level shift) of all eight.
const (
	pass1Bias = 1 << (pass1Shift - 1)
	pass2Bias = 1<<(pass2Shift-1) + 128<<pass2Shift
)

// clampSample limits a level-shifted sample to 0..255 (libjpeg-turbo's SIMD
// saturates; its C tables agree within ±384).
func clampSample(v int32) uint64 { return uint64(min(max(v, 0), 255)) }

// pack8 shifts eight biased second-pass sums to samples, packed first byte first.
func pack8(o0, o1, o2, o3, o4, o5, o6, o7 int32) uint64 {
	s0, s1, s2, s3 := o0>>pass2Shift, o1>>pass2Shift, o2>>pass2Shift, o3>>pass2Shift
	s4, s5, s6, s7 := o4>>pass2Shift, o5>>pass2Shift, o6>>pass2Shift, o7>>pass2Shift
	if uint32(s0|s1|s2|s3|s4|s5|s6|s7) <= 255 {
		return uint64(s0) | uint64(s1)<<8 | uint64(s2)<<16 | uint64(s3)<<24 |
			uint64(s4)<<32 | uint64(s5)<<40 | uint64(s6)<<48 | uint64(s7)<<56
	}
	return clampSample(s0) | clampSample(s1)<<8 | clampSample(s2)<<16 | clampSample(s3)<<24 |
		clampSample(s4)<<32 | clampSample(s5)<<40 | clampSample(s6)<<48 | clampSample(s7)<<56
}

// idctBlock transforms one block of quantised coefficients (natural order)
// with quantisation table q into 8×8 samples at dst (row stride stride),
// then zeroes blk. last is the last coded zigzag position.
func idctBlock(blk *[64]int16, q *[64]int32, last int, dst []uint8, stride int) {
	_ = dst[7*stride+7]
	if last == 0 {
		// DC only: both passes reduce to one rounded value.
		dc := int32(blk[0]) * q[0] << idctPass1Bits
		v := clampSample((dc+16)>>5+128) * 0x0101010101010101
		for y := 0; y < 8; y++ {
			binary.LittleEndian.PutUint64(dst[y*stride:], v)
		}
		blk[0] = 0
		return
	}
	var ws [64]int32
	if last <= 9 {
		// Zigzag positions 0..9 lie in the top-left 4×4 corner.
		columns4(blk, q, &ws)
		rows4(&ws, dst, stride)
		for y := 0; y < 4; y++ {
			*(*[4]int16)(blk[8*y:]) = [4]int16{}
		}
		return
	}
	columns8(blk, q, &ws)
	rows8(&ws, dst, stride)
	*blk = [64]int16{}
}

// columns8 is the first pass over all eight columns.
func columns8(blk *[64]int16, q *[64]int32, ws *[64]int32) {
	for x := 0; x < 8; x++ {
		c := (*[57]int16)(blk[x:])
		qc := (*[57]int32)(q[x:])
		if c[8]|c[16]|c[24]|c[32]|c[40]|c[48]|c[56] == 0 {
			dc := int32(c[0]) * qc[0] << idctPass1Bits
			ws[x], ws[8+x], ws[16+x], ws[24+x], ws[32+x], ws[40+x], ws[48+x], ws[56+x] = dc, dc, dc, dc, dc, dc, dc, dc
			continue
		}
		o0, o1, o2, o3, o4, o5, o6, o7 := idct8(pass1Bias, int32(c[0])*qc[0], int32(c[8])*qc[8], int32(c[16])*qc[16], int32(c[24])*qc[24],
			int32(c[32])*qc[32], int32(c[40])*qc[40], int32(c[48])*qc[48], int32(c[56])*qc[56])
		w := (*[57]int32)(ws[x:])
		w[0], w[8], w[16], w[24] = o0>>pass1Shift, o1>>pass1Shift, o2>>pass1Shift, o3>>pass1Shift
		w[32], w[40], w[48], w[56] = o4>>pass1Shift, o5>>pass1Shift, o6>>pass1Shift, o7>>pass1Shift
	}
}

// columns4 is the first pass when only the top-left 4×4 coefficients can be
// non-zero: columns 4..7 of the workspace stay zero.
func columns4(blk *[64]int16, q *[64]int32, ws *[64]int32) {
	for x := 0; x < 4; x++ {
		c := (*[25]int16)(blk[x:])
		qc := (*[25]int32)(q[x:])
		o0, o1, o2, o3, o4, o5, o6, o7 := idct4(pass1Bias, int32(c[0])*qc[0], int32(c[8])*qc[8], int32(c[16])*qc[16], int32(c[24])*qc[24])
		w := (*[57]int32)(ws[x:])
		w[0], w[8], w[16], w[24] = o0>>pass1Shift, o1>>pass1Shift, o2>>pass1Shift, o3>>pass1Shift
		w[32], w[40], w[48], w[56] = o4>>pass1Shift, o5>>pass1Shift, o6>>pass1Shift, o7>>pass1Shift
	}
}

// rows8 is the second pass, writing eight rows of samples.
func rows8(ws *[64]int32, dst []uint8, stride int) {
	for y := 0; y < 8; y++ {
		r := (*[8]int32)(ws[8*y:])
		binary.LittleEndian.PutUint64(dst[y*stride:], pack8(idct8(pass2Bias, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])))
	}
}

// rows4 is the second pass when workspace columns 4..7 are zero.
func rows4(ws *[64]int32, dst []uint8, stride int) {
	for y := 0; y < 8; y++ {
		r := (*[8]int32)(ws[8*y:])
		binary.LittleEndian.PutUint64(dst[y*stride:], pack8(idct4(pass2Bias, r[0], r[1], r[2], r[3])))
	}
}
