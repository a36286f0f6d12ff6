package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// number lexes an int or float literal (with _ separators) and returns its
// length.
func (lx *lexer) number(s string) int {
	n := 0
	digits := func() {
		for n < len(s) && (s[n] >= '0' && s[n] <= '9' || (s[n] == '_' && n+1 < len(s) && s[n+1] >= '0' && s[n+1] <= '9')) {
			n++
		}
	}
	digits()
	isFloat := false
	if n+1 < len(s) && s[n] == '.' && s[n+1] >= '0' && s[n+1] <= '9' {
		n++
		digits()
		isFloat = true
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && s[m] >= '0' && s[m] <= '9' {
			n = m
			digits()
			isFloat = true
		}
	}
	text := strings.ReplaceAll(s[:n], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0
		}
		lx.toks = append(lx.toks, token{kind: tFloat, val: f, line: lx.line})
	} else {
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return 0
		}
		lx.toks = append(lx.toks, token{kind: tInt, val: i, line: lx.line})
	}
	lx.pos += n
	return n
}

// lexString reads a quoted literal with Python's unicode-escape rules and
// returns its value and length in the source.
func lexString(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		hexN := 0
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			hexN = 2
		case 'u':
			hexN = 4
		case 'U':
			hexN = 8
		default:
			if e >= '0' && e <= '7' {
				j := i - 1
				for j < len(s) && j < i+2 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i-1:j], 8, 32)
				b.WriteRune(rune(v))
				i = j
			} else {
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		}
		if hexN > 0 {
			if i+hexN > len(s) {
				return "", 0, fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i:i+hexN], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", 0, fmt.Errorf("bad \\%c escape", e)
			}
			b.WriteRune(rune(v))
			i += hexN
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}
