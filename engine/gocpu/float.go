package gocpu

import "math"

// RoundBF16 rounds f to the nearest bfloat16 (ties to even), as MLX's cast does.
func RoundBF16(f float32) float32 {
	u := math.Float32bits(f)
	if u&0x7f800000 == 0x7f800000 { // Inf or NaN: keep (quiet NaN)
		if u&0x7fffff != 0 {
			u |= 0x400000
		}
		return math.Float32frombits(u &^ 0xffff)
	}
	u += 0x7fff + (u>>16)&1
	return math.Float32frombits(u &^ 0xffff)
}

// F16ToF32 widens an IEEE half (a NaN comes back quiet, as F16C gives it).
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		for man&0x400 == 0 {
			man <<= 1
			exp--
		}
		exp++
		man &= 0x3ff
	case exp == 0x1f && man != 0: // NaN, quieted as hardware conversions do
		return math.Float32frombits(sign | 0x7fc00000 | man<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F32ToF16 narrows to an IEEE half, rounding to nearest even.
func F32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23&0xff) - 127 + 15
	man := u & 0x7fffff
	if u&0x7fffffff >= 0x7f800000 {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		if rem := man & (1<<shift - 1); rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint16(exp)<<10 | uint16(man>>13)
	if rem := man & 0x1fff; rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | r
}

// widen sets dst[i] to the float32 value of the 2-byte float src[i]
// (bfloat16, or IEEE half when f16 is set), with the kernel set's loop.
func widen(dst []float32, src []uint16, f16 bool) {
	src = src[:len(dst)]
	if f16 {
		kern.widenF16(dst, src)
	} else {
		kern.widenBF16(dst, src)
	}
}

func widenBF16Go(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(v) << 16)
	}
}

func widenF16Go(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = F16ToF32(v)
	}
}

// narrow stores src as 2-byte floats (bfloat16, or IEEE half when f16 is
// set), rounding to nearest even.
func narrow(dst []uint16, src []float32, f16 bool) {
	src = src[:len(dst)]
	for i, v := range src {
		if f16 {
			dst[i] = F32ToF16(v)
		} else {
			dst[i] = uint16(math.Float32bits(RoundBF16(v)) >> 16)
		}
	}
}
