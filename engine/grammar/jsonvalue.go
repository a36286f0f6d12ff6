package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// object is a JSON object that keeps its key order (a schema's
// "properties" order is the order the answer writes them in).
type object struct {
	keys []string
	vals []any
}

func (o *object) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// parseJSON decodes data into nil, bool, json.Number, string, []any and
// *object, refusing nesting deeper than maxDepth.
func parseJSON(data []byte, maxDepth int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder, depth, maxDepth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch d {
	case '{':
		o := &object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := readValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			if i := index(o.keys, k); i >= 0 { // last one wins, as most parsers do
				o.vals[i] = v
				continue
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		var a []any
		for dec.More() {
			v, err := readValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		if a == nil {
			a = []any{}
		}
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

func index(keys []string, k string) int {
	for i, key := range keys {
		if key == k {
			return i
		}
	}
	return -1
}

// compactJSON writes v compactly with object keys in their order.
func compactJSON(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		if x {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case json.Number:
		return append(buf, x...)
	case string:
		return appendString(buf, x)
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = compactJSON(buf, e)
		}
		return append(buf, ']')
	case *object:
		buf = append(buf, '{')
		for i, k := range x.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = compactJSON(buf, k)
			buf = append(buf, ':')
			buf = compactJSON(buf, x.vals[i])
		}
		return append(buf, '}')
	}
	return buf
}

// appendString writes s as a JSON string: only '"', '\\' and control
// characters escaped, the rest raw (what compact serializers write).
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c == '\n':
			buf = append(buf, '\\', 'n')
		case c == '\r':
			buf = append(buf, '\\', 'r')
		case c == '\t':
			buf = append(buf, '\\', 't')
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}
