package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits on one call, so a hostile output cannot cost more than its length.
const (
	MaxCallBytes = 4 << 20 // a call's text
	maxDepth     = 128     // nesting of {} and []
)

var errUnclosed = errors.New("the tool call was not closed (no <tool_call|>)")

// SyntaxError says where a call's text stops making sense.
type SyntaxError struct {
	Offset int // byte offset in the call's text (after <|tool_call>)
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("tool call, at byte %d: %s", e.Offset, e.Msg)
}

// ParseCall reads a call's text, "call:NAME{…}", into the function's name
// and its arguments as a JSON object. The name is returned when it could
// be read, also with an error.
func ParseCall(body string) (name string, args json.RawMessage, err error) {
	if len(body) > MaxCallBytes {
		return "", nil, &SyntaxError{0, fmt.Sprintf("the call is %d bytes, over the %d allowed", len(body), MaxCallBytes)}
	}
	r := reader{s: body}
	r.space()
	if !strings.HasPrefix(r.s[r.pos:], "call:") {
		return "", nil, r.fail(`want "call:NAME{…}"`)
	}
	r.pos += len("call:")
	i := strings.IndexByte(r.s[r.pos:], '{')
	if i < 0 {
		return "", nil, r.fail("want '{' after the function name")
	}
	name = strings.TrimSpace(r.s[r.pos : r.pos+i])
	if name == "" || strings.ContainsAny(name, "<>\"',[]{}") {
		return "", nil, r.fail(fmt.Sprintf("%q is not a function name", name))
	}
	r.pos += i
	if err := r.object(0); err != nil {
		return name, nil, err
	}
	r.space()
	if r.pos != len(r.s) {
		return name, nil, r.fail("text after the arguments' closing '}'")
	}
	return name, json.RawMessage(r.out.Bytes()), nil
}

// reader walks a call's text and writes the JSON it means.
type reader struct {
	s   string
	pos int
	out bytes.Buffer
}

func (r *reader) fail(msg string) error { return &SyntaxError{r.pos, msg} }

func (r *reader) space() {
	for r.pos < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.pos]) >= 0 {
		r.pos++
	}
}

// object reads {key:value,…}; keys are bare (the template's form for
// arguments) or <|"|>-quoted (its form inside declarations).
func (r *reader) object(depth int) error {
	if depth > maxDepth {
		return r.fail(fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	r.pos++ // '{'
	r.out.WriteByte('{')
	r.space()
	if r.pos < len(r.s) && r.s[r.pos] == '}' {
		r.pos++
		r.out.WriteByte('}')
		return nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			r.out.WriteByte(',')
		}
		r.space()
		var key string
		if strings.HasPrefix(r.s[r.pos:], Quote) {
			var err error
			if key, err = r.quoted(); err != nil {
				return err
			}
			r.space()
			if r.pos >= len(r.s) || r.s[r.pos] != ':' {
				return r.fail("want ':' after a key")
			}
		} else {
			i := strings.IndexByte(r.s[r.pos:], ':')
			if i < 0 {
				return r.fail("want key:value")
			}
			key = strings.TrimSpace(r.s[r.pos : r.pos+i])
			if key == "" || strings.ContainsAny(key, "{}[],") || strings.Contains(key, Quote) {
				return r.fail(fmt.Sprintf("%q is not a key", key))
			}
			r.pos += i
		}
		r.pos++ // ':'
		writeString(&r.out, key)
		r.out.WriteByte(':')
		if err := r.value(depth + 1); err != nil {
			return err
		}
		r.space()
		if r.pos >= len(r.s) {
			return r.fail("the object is not closed: want ',' or '}'")
		}
		switch r.s[r.pos] {
		case ',':
			r.pos++
		case '}':
			r.pos++
			r.out.WriteByte('}')
			return nil
		default:
			return r.fail(fmt.Sprintf("want ',' or '}', not %q", r.s[r.pos]))
		}
	}
}

func (r *reader) array(depth int) error {
	if depth > maxDepth {
		return r.fail(fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	r.pos++ // '['
	r.out.WriteByte('[')
	r.space()
	if r.pos < len(r.s) && r.s[r.pos] == ']' {
		r.pos++
		r.out.WriteByte(']')
		return nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			r.out.WriteByte(',')
		}
		if err := r.value(depth + 1); err != nil {
			return err
		}
		r.space()
		if r.pos >= len(r.s) {
			return r.fail("the list is not closed: want ',' or ']'")
		}
		switch r.s[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			r.out.WriteByte(']')
			return nil
		default:
			return r.fail(fmt.Sprintf("want ',' or ']', not %q", r.s[r.pos]))
		}
	}
}

func (r *reader) value(depth int) error {
	r.space()
	if r.pos >= len(r.s) {
		return r.fail("want a value")
	}
	switch {
	case strings.HasPrefix(r.s[r.pos:], Quote):
		s, err := r.quoted()
		if err != nil {
			return err
		}
		writeString(&r.out, s)
		return nil
	case r.s[r.pos] == '{':
		return r.object(depth)
	case r.s[r.pos] == '[':
		return r.array(depth)
	case r.s[r.pos] == '"': // JSON's quotes, which models sometimes write instead
		return r.jsonString()
	}
	start := r.pos
	for r.pos < len(r.s) && strings.IndexByte(",}]", r.s[r.pos]) < 0 && !strings.HasPrefix(r.s[r.pos:], Quote) {
		r.pos++
	}
	word := strings.TrimSpace(r.s[start:r.pos])
	if word == "" || strings.ContainsRune(word, ':') {
		r.pos = start
		return r.fail("want a value (a ':' in an unquoted word: is a ',' missing?)")
	}
	r.out.WriteString(bare(word))
	return nil
}

// jsonString reads a "…" string with JSON's escapes.
func (r *reader) jsonString() error {
	i := r.pos + 1
	for i < len(r.s) && r.s[i] != '"' {
		if r.s[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(r.s) {
		return r.fail("a \"…\" string is not closed")
	}
	var s string
	if err := json.Unmarshal([]byte(r.s[r.pos:i+1]), &s); err != nil {
		return r.fail(fmt.Sprintf("a \"…\" string: %v", err))
	}
	r.pos = i + 1
	writeString(&r.out, s)
	return nil
}

// quoted reads <|"|>…<|"|>: everything up to the closing delimiter.
func (r *reader) quoted() (string, error) {
	r.pos += len(Quote)
	i := strings.Index(r.s[r.pos:], Quote)
	if i < 0 {
		return "", r.fail("a string is not closed (no <|\"|>)")
	}
	s := r.s[r.pos : r.pos+i]
	r.pos += i + len(Quote)
	return s, nil
}

// bare turns an unquoted word into JSON: the literals as the template
// prints them (true, false, None) and as JSON spells them, numbers (Python
// prints floats as 1e+20 or 3e-05, already JSON), and anything else as the
// string it is (a model that left a word unquoted meant a string).
func bare(w string) string {
	switch w {
	case "true", "True":
		return "true"
	case "false", "False":
		return "false"
	case "None", "null", "none":
		return "null"
	}
	if jsonNumber(w) {
		return w
	}
	if c := w[0]; c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9') {
		if f, err := strconv.ParseFloat(w, 64); err == nil && !math.IsInf(f, 0) && !strings.ContainsAny(w, "xX_pP") {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	var b bytes.Buffer
	writeString(&b, w)
	return b.String()
}

// jsonNumber reports whether w is a number in JSON's grammar.
func jsonNumber(w string) bool {
	i := 0
	if i < len(w) && w[i] == '-' {
		i++
	}
	switch {
	case i < len(w) && w[i] == '0':
		i++
	case i < len(w) && w[i] >= '1' && w[i] <= '9':
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(w) && w[i] == '.' {
		i++
		j := i
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(w) && (w[i] == 'e' || w[i] == 'E') {
		i++
		if i < len(w) && (w[i] == '+' || w[i] == '-') {
			i++
		}
		j := i
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(w)
}

// writeString writes s as a JSON string, leaving <, > and & as they are.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}
