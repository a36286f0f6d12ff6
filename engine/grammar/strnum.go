package grammar

import (
	"math"
	"perch/engine/grammar/regex"
	"unicode/utf8"
)

// String progress (frame.aux).
const (
	sPlain   = 0
	sEscape  = 1 // after '\'
	sHex     = 2 // 2..5: \u digits read
	sLowEsc  = 6 // after a high surrogate: '\' of the low one
	sLowU    = 7
	sLowHex  = 8  // 8..11
	sUTF8    = 16 // 16+k: k continuation bytes still to come
	sAfterLT = 32 // Gemma-4 strings: the last character was '<'
)

func (m *matcher) stepString(s *stack, f frame, c byte, out []*stack) []*stack {
	g := m.g
	if g.tool {
		if f.aux >= sUTF8 && f.aux < sAfterLT {
			return m.continueUTF8(s, f, c, out)
		}
		if c == g.quote[0] {
			if m.stringDone(f) {
				out = append(out, m.push(frame{k: fBytes, bs: g.quote, i: 1}, s.up))
			}
			return out
		}
		if c == '|' && f.aux == sAfterLT {
			return out // "<|" would read as the start of a special token
		}
		f.aux = sPlain
		if c == '<' {
			f.aux = sAfterLT
		}
		return m.byteRune(s, f, c, out)
	}
	switch {
	case f.aux == sPlain:
		switch {
		case c == '"':
			if f.key && f.n.any != nil && f.aux == sPlain {
				return m.keyClosed(s.up, f.n, f.n.any.declared(f.n.names, f.i), out)
			}
			if m.stringDone(f) {
				out = append(out, s.up)
			}
			return out
		case c == '\\':
			if !m.escapeFits(f) {
				return out
			}
			f.aux = sEscape
			return append(out, m.push(f, s.up))
		case c < 0x20:
			return out
		}
		return m.byteRune(s, f, c, out)
	case f.aux == sEscape:
		var r rune
		switch c {
		case '"', '\\', '/':
			r = rune(c)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			if f.re != nil {
				return out // \u escapes are not checked against regexes: refused there
			}
			f.aux, f.cp = sHex, 0
			return append(out, m.push(f, s.up))
		default:
			return out
		}
		f.aux = sPlain
		return m.addRune(s, f, r, out)
	case f.aux >= sHex && f.aux < sLowEsc, f.aux >= sLowHex && f.aux < sUTF8:
		h := hexVal(c)
		if h < 0 {
			return out
		}
		f.cp = f.cp<<4 | rune(h)
		f.aux++
		switch f.aux {
		case sLowEsc: // four digits
			switch {
			case f.cp >= 0xD800 && f.cp < 0xDC00:
				f.mant = uint64(f.cp)
				return append(out, m.push(f, s.up))
			case f.cp >= 0xDC00 && f.cp < 0xE000:
				return out // a lone low surrogate
			}
			f.aux = sPlain
			return m.addRune(s, f, f.cp, out)
		case sLowHex + 4: // the low surrogate's four digits
			if f.cp < 0xDC00 || f.cp >= 0xE000 {
				return out
			}
			r := 0x10000 + (rune(f.mant)-0xD800)<<10 + (f.cp - 0xDC00)
			f.aux = sPlain
			return m.addRune(s, f, r, out)
		}
		return append(out, m.push(f, s.up))
	case f.aux == sLowEsc:
		if c == '\\' {
			f.aux = sLowU
			return append(out, m.push(f, s.up))
		}
		return out
	case f.aux == sLowU:
		if c == 'u' {
			f.aux, f.cp = sLowHex, 0
			return append(out, m.push(f, s.up))
		}
		return out
	}
	return m.continueUTF8(s, f, c, out)
}

// byteRune reads a byte that starts a character.
func (m *matcher) byteRune(s *stack, f frame, c byte, out []*stack) []*stack {
	switch {
	case c < 0x80:
		return m.addRune(s, f, rune(c), out)
	case c >= 0xC2 && c <= 0xDF:
		f.aux, f.cp = sUTF8+1, rune(c&0x1F)
	case c >= 0xE0 && c <= 0xEF:
		f.aux, f.cp = sUTF8+2, rune(c&0x0F)
	case c >= 0xF0 && c <= 0xF4:
		f.aux, f.cp = sUTF8+3, rune(c&0x07)
	default:
		return out
	}
	f.mant = uint64(c) // the lead byte bounds the next one
	if !m.runeFits(f) {
		return out
	}
	return append(out, m.push(f, s.up))
}

func (m *matcher) continueUTF8(s *stack, f frame, c byte, out []*stack) []*stack {
	lo, hi := byte(0x80), byte(0xBF)
	if f.mant != 0 { // the second byte of a sequence
		switch f.mant {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
	}
	if c < lo || c > hi {
		return out
	}
	f.mant = 0
	f.cp = f.cp<<6 | rune(c&0x3F)
	if f.aux--; f.aux > sUTF8 {
		if !m.runeFits(f) {
			return out
		}
		return append(out, m.push(f, s.up))
	}
	f.aux = sPlain
	return m.addRune(s, f, f.cp, out)
}

// runeFits reports whether the character begun in f can be taken: the
// length bound has room and the regex takes some rune it may become (so a
// partial character is never a dead end).
func (m *matcher) runeFits(f frame) bool {
	if !f.key && f.n.maxLen >= 0 && int(f.cnt) >= f.n.maxLen {
		return false
	}
	if f.re == nil {
		return true
	}
	k := uint(f.aux-sUTF8) * 6
	lo := f.cp << k
	hi := lo | (1<<k - 1)
	if f.mant != 0 { // only the lead byte read: not overlong
		lo = max(lo, [4]rune{0, 0x80, 0x800, 0x10000}[k/6])
	}
	return f.re.CanTake(f.st, lo, hi)
}

// escapeFits reports whether some escape can follow a backslash.
func (m *matcher) escapeFits(f frame) bool {
	if !f.key && f.n.maxLen >= 0 && int(f.cnt) >= f.n.maxLen {
		return false
	}
	if f.re == nil {
		return true
	}
	for _, r := range `"\\/` + "\b\f\n\r\t" {
		if f.re.CanTake(f.st, r, r) {
			return true
		}
	}
	return false
}

// addRune counts a character of the string's value.
func (m *matcher) addRune(s *stack, f frame, r rune, out []*stack) []*stack {
	if f.key {
		if f.i >= 0 && f.n.names == nil {
			f.i = -1
		}
		if f.i >= 0 {
			var buf [4]byte
			for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
				if f.i = f.n.names.step(f.i, b); f.i < 0 {
					break
				}
			}
		}
	} else {
		f.cnt++
		if f.n.maxLen >= 0 && int(f.cnt) > f.n.maxLen {
			return out
		}
	}
	if f.re != nil {
		if f.st = f.re.Next(f.st, r); f.st == regex.Dead {
			return out
		}
	}
	return append(out, m.push(f, s.up))
}

func (m *matcher) stringDone(f frame) bool {
	if f.aux != sPlain && f.aux != sAfterLT {
		return false
	}
	if f.key {
		return f.i < 0 || f.n.names == nil || !f.n.names.end[f.i]
	}
	return int(f.cnt) >= f.n.minLen && (f.re == nil || f.re.Accepts(f.st))
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Number phases (frame.st).
const (
	nStart = iota
	nMinus
	nZero
	nInt
	nDot
	nFrac
	nExp
	nExpSign
	nExpDigits
)

const maxBoundedDigits = 18 // digits kept exactly when bounds are checked

// stepNumber feeds c to the number in f (not yet pushed: up is its parent).
func (m *matcher) stepNumber(up *stack, f frame, c byte, out []*stack) []*stack {
	if nf, ok := advanceNumber(f, c); ok {
		if feasible(nf) {
			out = append(out, m.push(nf, up))
		}
		return out
	}
	if f.st != nStart && numberDone(f) {
		out = m.step(up, c, out)
	}
	return out
}

func advanceNumber(f frame, c byte) (frame, bool) {
	n := f.n
	bounded := n.hasMin || n.hasMax
	frac := n.types&tFrac != 0
	digit := c >= '0' && c <= '9'
	addDigit := func() bool {
		if bounded {
			if f.cnt >= maxBoundedDigits {
				return false
			}
			f.mant = f.mant*10 + uint64(c-'0')
		}
		f.cnt++
		return true
	}
	switch f.st {
	case nStart, nMinus:
		switch {
		case c == '-' && f.st == nStart:
			f.st, f.aux = nMinus, 1
			return f, true
		case c == '0':
			f.st = nZero
			return f, addDigit()
		case digit:
			f.st = nInt
			return f, addDigit()
		}
	case nZero, nInt:
		switch {
		case digit && f.st == nInt:
			return f, addDigit()
		case c == '.' && frac:
			f.st = nDot
			return f, true
		case (c == 'e' || c == 'E') && frac:
			f.st = nExp
			return f, true
		}
	case nDot, nFrac:
		switch {
		case digit:
			f.st = nFrac
			f.cp++
			return f, addDigit()
		case (c == 'e' || c == 'E') && f.st == nFrac:
			f.st = nExp
			return f, true
		}
	case nExp:
		if c == '+' || c == '-' {
			f.st = nExpSign
			if c == '-' {
				f.aux |= expNeg
			}
			return f, true
		}
		fallthrough
	case nExpSign, nExpDigits:
		if digit {
			f.st = nExpDigits
			if bounded {
				// the exponent is kept: |exponent - fraction digits| stays
				// within 22, where the value is computed exactly rounded
				f.i = f.i*10 + int32(c-'0')
				if e10 := exponent(f) - int(f.cp); e10 > maxExp10 || e10 < -maxExp10 {
					return f, false
				}
			}
			return f, true
		}
	}
	return f, false
}

func numberDone(f frame) bool {
	switch f.st {
	case nZero, nInt, nFrac, nExpDigits:
	default:
		return false
	}
	n := f.n
	if !n.hasMin && !n.hasMax {
		return true
	}
	v := scaled(f.mant, exponent(f)-int(f.cp))
	if f.aux&1 != 0 {
		v = -v
	}
	return inBounds(n, v, true, v, true)
}

// Number flags (frame.aux) and the exponent (frame.i) of a bounded number.
const (
	expNeg   = 2  // the exponent is negative
	maxExp10 = 22 // 10^22 is the largest power of ten a float64 holds exactly
)

func exponent(f frame) int {
	if f.aux&expNeg != 0 {
		return -int(f.i)
	}
	return int(f.i)
}

// digitsLead reports whether e can be written starting with the digits
// of prefix (0: only zeros so far, which any exponent may follow).
func digitsLead(prefix, e int) bool {
	if prefix == 0 {
		return true
	}
	for e > prefix {
		e /= 10
	}
	return e == prefix
}

// scaled is mant·10^e10, rounded once (|e10| <= 22).
func scaled(mant uint64, e10 int) float64 {
	if e10 >= 0 {
		return float64(mant) * math.Pow10(e10)
	}
	return float64(mant) / math.Pow10(-e10)
}

// feasible reports whether the number begun in f can still end in bounds.
func feasible(f frame) bool {
	n := f.n
	if !n.hasMin && !n.hasMax {
		return true
	}
	neg := f.aux&1 != 0
	// magnitudes reachable: [lo, hi) (hi inclusive when hiInc)
	check := func(lo float64, hi float64, hiInc bool) bool {
		if neg {
			return inBounds(n, -hi, hiInc, -lo, true)
		}
		return inBounds(n, lo, true, hi, hiInc)
	}
	frac := n.types&tFrac != 0
	scale := math.Pow10(int(f.cp))
	v := float64(f.mant) / scale
	if frac && f.mant == 0 && f.cnt < maxBoundedDigits && (f.st == nZero || f.st == nDot || f.st == nFrac) {
		return check(0, math.Inf(1), false) // 0.0…0d…e±j: any magnitude
	}
	if frac && f.mant > 0 && (f.st == nInt || f.st == nDot || f.st == nFrac) {
		// more digits and an exponent make it [mant, mant+1)·10^j
		for j := -maxExp10; j <= maxExp10; j++ {
			if check(scaled(f.mant, j), scaled(f.mant+1, j), false) {
				return true
			}
		}
	}
	switch f.st {
	case nMinus:
		return check(0, math.Inf(1), false)
	case nExp, nExpSign, nExpDigits:
		// the value is fixed but for the exponent: try each one the digits
		// so far can still become, within the limit
		for e := 0; e <= maxExp10+int(f.cp); e++ {
			if f.st == nExpDigits && !digitsLead(int(f.i), e) {
				continue
			}
			for _, sign := range []int{1, -1} {
				if (sign < 0) != (f.aux&expNeg != 0) && f.st != nExp {
					continue
				}
				if e10 := sign*e - int(f.cp); e10 >= -maxExp10 && e10 <= maxExp10 {
					if v := scaled(f.mant, e10); check(v, v, true) {
						return true
					}
				}
			}
		}
		return false
	case nZero:
		if frac {
			return check(0, 1, false)
		}
		return check(0, 0, true)
	case nDot, nFrac:
		return check(v, v+1/scale, false)
	case nInt:
		if frac {
			if check(v, v+1, false) {
				return true
			}
		} else if check(v, v, true) {
			return true
		}
		for k := int(f.cnt) + 1; k <= maxBoundedDigits; k++ {
			p := math.Pow10(k - int(f.cnt))
			if check(v*p, (v+1)*p, false) {
				return true
			}
		}
		return false
	}
	return true
}

// inBounds reports whether [lo, hi] (ends as flagged) meets n's bounds.
func inBounds(n *node, lo float64, loInc bool, hi float64, hiInc bool) bool {
	if n.hasMin && (n.min > lo || n.min == lo && n.exMin) {
		lo, loInc = n.min, !n.exMin
	}
	if n.hasMax && (n.max < hi || n.max == hi && n.exMax) {
		hi, hiInc = n.max, !n.exMax
	}
	return lo < hi || lo == hi && loInc && hiInc
}
