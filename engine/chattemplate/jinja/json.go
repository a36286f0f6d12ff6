package jinja

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

type jsonOptions struct {
	indent          string
	pretty          bool
	itemSep, keySep string
	sortKeys, ascii bool
}

// toJSON is Python's json.dumps as HF's tojson filter calls it.
func (r *renderer) toJSON(v Value, opt jsonOptions) string {
	b := &boundedBuilder{max: int(min(r.lim.Alloc-r.alloc, int64(r.lim.Output)))}
	r.writeJSON(b, v, opt, 0)
	if b.over {
		r.limit("tojson of a value larger than %d MiB", r.lim.Output>>20)
	}
	r.charge(int64(b.Len()))
	return b.String()
}

func (r *renderer) writeJSON(b *boundedBuilder, v Value, opt jsonOptions, depth int) {
	if b.over {
		return
	}
	if depth > maxDataDepth {
		r.fail("tojson: value nested more than %d deep", maxDataDepth)
	}
	newline := func(level int) {
		if opt.pretty {
			b.WriteString("\n" + strings.Repeat(opt.indent, level))
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(pyFloat(x))
		}
	case string:
		writeJSONString(b, x, opt.ascii)
	case *List:
		if len(x.Items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(opt.itemSep)
			}
			newline(depth + 1)
			r.writeJSON(b, it, opt, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	case *Dict:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		order := make([]int, x.Len())
		for i := range order {
			order[i] = i
		}
		keys := make([]string, x.Len())
		for i, k := range x.keys {
			switch kk := k.(type) {
			case string:
				keys[i] = kk
			case nil:
				keys[i] = "null"
			case bool:
				keys[i] = strconv.FormatBool(kk)
			case int64:
				keys[i] = strconv.FormatInt(kk, 10)
			case float64:
				keys[i] = pyFloat(kk)
			default:
				r.fail("tojson: keys must be str, int, float, bool or None, not %s", typeName(k))
			}
		}
		if opt.sortKeys {
			slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(keys[i], keys[j]) })
		}
		b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				b.WriteString(opt.itemSep)
			}
			newline(depth + 1)
			writeJSONString(b, keys[i], opt.ascii)
			b.WriteString(opt.keySep)
			r.writeJSON(b, x.vals[i], opt, depth+1)
		}
		newline(depth)
		b.WriteByte('}')
	default:
		r.fail("tojson: object of type %s is not JSON serializable", typeName(v))
	}
}

// writeJSONString escapes as Python's json module does.
func writeJSONString(b *boundedBuilder, s string, ascii bool) {
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20 || (ascii && c > 0x7e):
			if c > 0xffff {
				c -= 0x10000
				b.WriteString(fmt.Sprintf(`\u%04x\u%04x`, 0xd800+(c>>10), 0xdc00+(c&0x3ff)))
			} else {
				b.WriteString(fmt.Sprintf(`\u%04x`, c))
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// FromJSON converts JSON text into template values as Python's json.loads
// would: objects keep key order, numbers with '.', 'e' or 'E' are floats,
// others ints.
func FromJSON(data []byte) (v Value, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			v, err = nil, fmt.Errorf("json: internal error: %v", rec)
		}
	}()
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v) // for a precise message
		if err == nil {
			err = fmt.Errorf("json: invalid")
		}
		return nil, err
	}
	return (&jsonParser{data: data}).value(0)
}

// jsonParser walks JSON already checked by json.Valid.
type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) && (p.data[p.pos] == ' ' || p.data[p.pos] == '\t' || p.data[p.pos] == '\n' || p.data[p.pos] == '\r') {
		p.pos++
	}
}

func (p *jsonParser) value(depth int) (Value, error) {
	if depth > maxDataDepth {
		return nil, fmt.Errorf("json: nested more than %d deep", maxDataDepth)
	}
	p.space()
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		d := NewDict()
		for {
			p.space()
			if p.data[p.pos] == '}' {
				p.pos++
				return d, nil
			}
			if p.data[p.pos] == ',' {
				p.pos++
				p.space()
			}
			k := p.str()
			p.space()
			p.pos++ // ':'
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.Set(k, v)
		}
	case c == '[':
		p.pos++
		l := &List{}
		for {
			p.space()
			if p.data[p.pos] == ']' {
				p.pos++
				return l, nil
			}
			if p.data[p.pos] == ',' {
				p.pos++
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			l.Items = append(l.Items, v)
		}
	case c == '"':
		return p.str(), nil
	case c == 't':
		p.pos += 4
		return true, nil
	case c == 'f':
		p.pos += 5
		return false, nil
	case c == 'n':
		p.pos += 4
		return nil, nil
	}
	start := p.pos
	for p.pos < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[p.pos]) >= 0 {
		p.pos++
	}
	return pyNumber(string(p.data[start:p.pos])), nil
}

// str reads a string literal; escapes go through encoding/json.
func (p *jsonParser) str() string {
	start := p.pos
	p.pos++
	escaped := false
	for p.data[p.pos] != '"' {
		if p.data[p.pos] == '\\' {
			escaped = true
			p.pos++
		}
		p.pos++
	}
	p.pos++
	if !escaped {
		return string(p.data[start+1 : p.pos-1])
	}
	var s string
	json.Unmarshal(p.data[start:p.pos], &s)
	return s
}

// pyNumber parses a JSON number as Python would: int unless it has a
// fraction or exponent (ints beyond 64 bits become floats here).
func pyNumber(s string) Value {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// FromGo converts plain Go values (as encoding/json produces them, plus
// ints, json.RawMessage and []string) into template values. Map keys are
// sorted, since Go maps have no order.
func FromGo(v any) (Value, error) {
	return fromGo(v, 0)
}

func fromGo(v any, depth int) (Value, error) {
	if depth > maxDataDepth {
		return nil, fmt.Errorf("value nested more than %d deep", maxDataDepth)
	}
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		return pyNumber(string(x)), nil
	case json.RawMessage:
		return FromJSON(x)
	case []string:
		l := &List{Items: make([]Value, len(x))}
		for i, s := range x {
			l.Items[i] = s
		}
		return l, nil
	case []any:
		l := &List{Items: make([]Value, len(x))}
		for i, it := range x {
			var err error
			if l.Items[i], err = fromGo(it, depth+1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := NewDict()
		for _, k := range keys {
			it, err := fromGo(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			d.Set(k, it)
		}
		return d, nil
	case *List, *Dict:
		return x, nil
	}
	return nil, fmt.Errorf("cannot pass a %T to a template", v)
}
