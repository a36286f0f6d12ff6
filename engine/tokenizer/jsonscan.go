package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a minimal pull parser over a JSON document held in memory. The
// vocabulary and merge list of a 262k tokenizer.json are read through it
// straight into compact tables, without building millions of interface
// values or small strings first (that is what keeps Load under ~100 MB).
// Every error names the file and the byte offset.
type scanner struct {
	file string
	data []byte
	pos  int
	buf  []byte // scratch for unescaped strings

	strAt      int  // where the last string's contents start in data
	strEscaped bool // whether the last string had escapes (then it is in buf)
}

// maxNesting bounds recursion in skipValue so a hostile file cannot exhaust
// the stack with "[[[[…".
const maxNesting = 128

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", s.file, s.pos, fmt.Sprintf(format, args...))
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of the input.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of input, want %q", c)
		}
		return s.errorf("want %q, found %q", c, s.data[s.pos])
	}
	s.pos++
	return nil
}

// literal consumes one of true, false, null.
func (s *scanner) literal(word string) bool {
	if len(s.data)-s.pos >= len(word) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	return false
}

// str reads a JSON string. The result aliases the input when the string has
// no escapes, else the scratch buffer: copy it before the next call.
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.pos
	s.strAt, s.strEscaped = start, false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.data[start : s.pos-1], nil
		case c == '\\':
			s.buf = append(s.buf[:0], s.data[start:s.pos]...)
			s.strEscaped = true
			return s.strSlow()
		case c < 0x20:
			return nil, s.errorf("control character %#x in string", c)
		}
		s.pos++
	}
	return nil, s.errorf("unterminated string")
}

func (s *scanner) strSlow() ([]byte, error) {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.buf, nil
		case c < 0x20:
			return nil, s.errorf("control character %#x in string", c)
		case c != '\\':
			s.buf = append(s.buf, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.data) {
			break
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					if r2, err = s.hex4(); err != nil {
						return nil, err
					}
					if utf16.DecodeRune(r, r2) == utf8.RuneError {
						s.pos, r2 = save, -1
					}
				}
				r = utf16.DecodeRune(r, r2) // lone surrogate → U+FFFD, as encoding/json does
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.data) {
		return 0, s.errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 16)
	if err != nil {
		return 0, s.errorf("bad \\u escape")
	}
	s.pos += 4
	return rune(v), nil
}

// number reads a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	s.skipSpace()
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.pos++
			continue
		}
		break
	}
	if start == s.pos {
		return nil, s.errorf("want a number")
	}
	return s.data[start:s.pos], nil
}

// integer reads a JSON number that must be an integer in [0, max].
func (s *scanner) integer(max int64) (int64, error) {
	start := s.pos
	txt, err := s.number()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(txt), 10, 64)
	if err != nil || v < 0 || v > max {
		s.pos = start
		return 0, s.errorf("want an integer in [0, %d], found %.20q", max, txt)
	}
	return v, nil
}

// object calls fn for each member; fn must consume the member's value.
func (s *scanner) object(fn func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		case 0:
			return s.errorf("unexpected end of input (truncated file?)")
		default:
			return s.errorf("want ',' or '}' in object")
		}
	}
}

// array calls fn for each element; fn must consume the element.
func (s *scanner) array(fn func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		case 0:
			return s.errorf("unexpected end of input (truncated file?)")
		default:
			return s.errorf("want ',' or ']' in array")
		}
	}
}

// raw skips one value and returns its bytes.
func (s *scanner) raw() ([]byte, error) {
	s.skipSpace()
	start := s.pos
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return s.data[start:s.pos], nil
}

func (s *scanner) skip(depth int) error {
	if depth > maxNesting {
		return s.errorf("nesting deeper than %d", maxNesting)
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() error { return s.skip(depth + 1) })
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		if s.literal("true") {
			return nil
		}
	case c == 'f':
		if s.literal("false") {
			return nil
		}
	case c == 'n':
		if s.literal("null") {
			return nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	case c == 0:
		return s.errorf("unexpected end of input")
	}
	return s.errorf("unexpected %q", s.data[s.pos])
}

// boolOrNull reads true/false/null (null → false).
func (s *scanner) boolOrNull() (bool, error) {
	s.skipSpace()
	switch {
	case s.literal("true"):
		return true, nil
	case s.literal("false"), s.literal("null"):
		return false, nil
	}
	return false, s.errorf("want true, false or null")
}

// strOrNull reads a string or null; ok is false for null.
func (s *scanner) strOrNull() (v string, ok bool, err error) {
	if s.peek() == 'n' && s.literal("null") {
		return "", false, nil
	}
	b, err := s.str()
	return string(b), err == nil, err
}

var errTrailing = errors.New("trailing data after the JSON value")

// end checks that only white space follows the document.
func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.errorf("%v", errTrailing)
	}
	return nil
}
