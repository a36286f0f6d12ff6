package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Lexer for Jinja2 as Hugging Face configures it (trim_blocks, lstrip_blocks,
// keep_trailing_newline off). Port of the rules in jinja2/lexer.py:
//   - newlines in the source are normalized to "\n" and one trailing newline
//     is dropped;
//   - "{%-"/"-%}" (and for "{{", "{#") strip all white space on that side;
//   - trim_blocks drops the first "\n" after "%}" and "#}" ("+%}" keeps it);
//   - lstrip_blocks drops spaces before "{%"/"{#" when only white space
//     precedes them on their line ("{%+" keeps them);
//   - inside (), [] or {} an end delimiter is not one ({{ {'a': 1}}} works).

type tokKind uint8

const (
	tText tokKind = iota
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
	tEOF
)

type token struct {
	kind tokKind
	text string // operator, name, or raw text
	val  Value  // literal value for strings and numbers
	line int
}

type lexer struct {
	src  string
	pos  int
	line int
	toks []token
	// lineStart is true when the text that follows starts a line (template
	// start, or the previous tag swallowed a newline).
	lineStart bool
}

func lex(src string) ([]token, error) {
	src = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(src)
	src = strings.TrimSuffix(src, "\n")
	lx := &lexer{src: src, line: 1, lineStart: true}
	if err := lx.run(); err != nil {
		return nil, err
	}
	lx.toks = append(lx.toks, token{kind: tEOF, line: lx.line})
	return lx.toks, nil
}

func (lx *lexer) errorf(format string, args ...any) error {
	return fmt.Errorf("template line %d: %s", lx.line, fmt.Sprintf(format, args...))
}

func (lx *lexer) run() error {
	for lx.pos < len(lx.src) {
		rest := lx.src[lx.pos:]
		i := strings.Index(rest, "{")
		for i >= 0 && (i+1 >= len(rest) || !strings.ContainsRune("{%#", rune(rest[i+1]))) {
			j := strings.Index(rest[i+1:], "{")
			if j < 0 {
				i = -1
			} else {
				i += 1 + j
			}
		}
		if i < 0 {
			lx.text(rest)
			lx.pos = len(lx.src)
			return nil
		}
		kind := rest[i+1]
		sign := byte(0)
		if i+2 < len(rest) && (rest[i+2] == '-' || rest[i+2] == '+') {
			sign = rest[i+2]
		}
		text := rest[:i]
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, pySpace)
		case sign != '+' && kind != '{':
			l := strings.LastIndexByte(text, '\n') + 1
			if (l > 0 || lx.lineStart) && strings.TrimLeftFunc(text[l:], pySpace) == "" {
				text = text[:l]
			}
		}
		lx.text(text)
		lx.pos += i + 2
		if sign != 0 {
			lx.pos++
		}
		var err error
		switch kind {
		case '#':
			err = lx.comment()
		case '{':
			err = lx.tag(tVarBegin, tVarEnd, "}}")
		default:
			if lx.isRaw() {
				err = lx.raw()
			} else {
				err = lx.tag(tBlockBegin, tBlockEnd, "%}")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (lx *lexer) text(s string) {
	if s != "" {
		lx.toks = append(lx.toks, token{kind: tText, text: s, line: lx.line})
		lx.line += strings.Count(s, "\n")
	}
	lx.lineStart = false
}

// after consumes white space after an end delimiter as its sign says.
func (lx *lexer) after(sign byte, trim bool) {
	start := lx.pos
	switch {
	case sign == '-':
		rest := lx.src[lx.pos:]
		lx.pos += len(rest) - len(strings.TrimLeftFunc(rest, pySpace))
	case sign != '+' && trim && strings.HasPrefix(lx.src[lx.pos:], "\n"):
		lx.pos++
	}
	lx.line += strings.Count(lx.src[start:lx.pos], "\n")
	lx.lineStart = lx.pos > start && lx.src[lx.pos-1] == '\n'
}

func (lx *lexer) comment() error {
	end := strings.Index(lx.src[lx.pos:], "#}")
	if end < 0 {
		return lx.errorf("unclosed comment")
	}
	body := lx.src[lx.pos : lx.pos+end]
	sign := byte(0)
	if strings.HasSuffix(body, "-") || strings.HasSuffix(body, "+") {
		sign = body[len(body)-1]
	}
	lx.line += strings.Count(body, "\n")
	lx.pos += end + 2
	lx.after(sign, true)
	return nil
}

func (lx *lexer) isRaw() bool {
	rest := strings.TrimLeftFunc(lx.src[lx.pos:], unicode.IsSpace)
	if !strings.HasPrefix(rest, "raw") {
		return false
	}
	rest = strings.TrimLeftFunc(rest[3:], unicode.IsSpace)
	return strings.HasPrefix(rest, "%}") || strings.HasPrefix(rest, "-%}") || strings.HasPrefix(rest, "+%}")
}

// raw copies everything up to {% endraw %} as text.
func (lx *lexer) raw() error {
	open := strings.Index(lx.src[lx.pos:], "%}")
	sign := lx.src[lx.pos+open-1]
	lx.pos += open + 2
	lx.after(sign, true)
	for i := lx.pos; ; {
		j := strings.Index(lx.src[i:], "{%")
		if j < 0 {
			return lx.errorf("missing {%% endraw %%}")
		}
		k := i + j + 2
		inner := k
		if inner < len(lx.src) && (lx.src[inner] == '-' || lx.src[inner] == '+') {
			inner++
		}
		rest := strings.TrimLeftFunc(lx.src[inner:], unicode.IsSpace)
		if strings.HasPrefix(rest, "endraw") {
			text := lx.src[lx.pos : i+j]
			if lx.src[k] == '-' {
				text = strings.TrimRightFunc(text, pySpace)
			}
			lx.text(text)
			endAt := strings.Index(lx.src[k:], "%}")
			if endAt < 0 {
				return lx.errorf("unclosed endraw")
			}
			s := lx.src[k+endAt-1]
			lx.pos = k + endAt + 2
			lx.after(s, true)
			return nil
		}
		i = k
	}
}

var operators = []string{"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=",
	"(", ")", "[", "]", "{", "}", ",", ".", ":", "|", ";"}

// tag lexes the expression tokens of a {{ }} or {% %} tag.
func (lx *lexer) tag(begin, end tokKind, close string) error {
	lx.toks = append(lx.toks, token{kind: begin, line: lx.line})
	depth := 0
	for {
		for lx.pos < len(lx.src) {
			r, w := utf8.DecodeRuneInString(lx.src[lx.pos:])
			if !unicode.IsSpace(r) {
				break
			}
			if r == '\n' {
				lx.line++
			}
			lx.pos += w
		}
		rest := lx.src[lx.pos:]
		if rest == "" {
			return lx.errorf("unclosed tag, want %q", close)
		}
		if depth == 0 {
			for _, sign := range []string{"-", "+", ""} {
				if sign == "+" && end == tVarEnd {
					continue
				}
				if strings.HasPrefix(rest, sign+close) {
					lx.pos += len(sign) + len(close)
					lx.toks = append(lx.toks, token{kind: end, line: lx.line})
					s := byte(0)
					if sign != "" {
						s = sign[0]
					}
					lx.after(s, end == tBlockEnd)
					return nil
				}
			}
		}
		c := rest[0]
		switch {
		case c == '\'' || c == '"':
			s, n, err := lexString(rest)
			if err != nil {
				return lx.errorf("%v", err)
			}
			lx.toks = append(lx.toks, token{kind: tString, val: s, line: lx.line})
			lx.line += strings.Count(rest[:n], "\n")
			lx.pos += n
		case c >= '0' && c <= '9':
			n := lx.number(rest)
			if n == 0 {
				return lx.errorf("bad number %.10q", rest)
			}
		case c == '_' || unicode.IsLetter(rune(c)) || c >= utf8.RuneSelf:
			n := 0
			for n < len(rest) {
				r, w := utf8.DecodeRuneInString(rest[n:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				n += w
			}
			if n == 0 {
				return lx.errorf("unexpected character %q", rest[:1])
			}
			lx.toks = append(lx.toks, token{kind: tName, text: rest[:n], line: lx.line})
			lx.pos += n
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				return lx.errorf("unexpected character %q", rest[:1])
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return lx.errorf("unbalanced %q", op)
				}
				depth--
			}
			lx.toks = append(lx.toks, token{kind: tOp, text: op, line: lx.line})
			lx.pos += len(op)
		}
	}
}
