package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's printing and white-space rules.

// writeStrRepr is Python's repr of a str: single quotes unless the text has
// ' and no ", escapes for non-printable characters.
func writeStrRepr(b *boundedBuilder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || !pyPrintable(r):
			switch {
			case r < 0x100:
				b.WriteString(fmt.Sprintf(`\x%02x`, r))
			case r < 0x10000:
				b.WriteString(fmt.Sprintf(`\u%04x`, r))
			default:
				b.WriteString(fmt.Sprintf(`\U%08x`, r))
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// pyPrintable is str.isprintable for one character.
func pyPrintable(r rune) bool {
	return r == ' ' || (r != utf8.RuneError && unicode.IsPrint(r))
}

// pyFloat formats a float as Python's repr: the shortest round-trip digits,
// positional for 1e-4 <= |x| < 1e16, else exponent form; always a '.' or an
// exponent ("3.0", "1e+20", "1.5e-07", "-0.0", "inf", "nan").
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// pySpace is str.isspace for one character (the set str.strip() removes).
func pySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func pyStrip(s, chars string, left, right bool) string {
	in := pySpace
	if chars != "" {
		in = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, in)
	}
	if right {
		s = strings.TrimRightFunc(s, in)
	}
	return s
}
