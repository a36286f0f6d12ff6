package jinja

import (
	"fmt"
	"strconv"
	"strings"
)

// Python string formatting: "%" and str.format.

// printf is Python's "format % args" for %s %r %d %i %f %e %g %x %%.
func (r *renderer) printf(format string, args Value) string {
	var list []Value
	named, _ := args.(*Dict)
	if t, ok := args.(*List); ok && t.Tuple {
		list = t.Items
	} else if named == nil {
		list = []Value{args}
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		var v Value
		if j < len(format) && format[j] == '(' && named != nil {
			end := strings.IndexByte(format[j:], ')')
			if end < 0 {
				r.fail("format: incomplete %%(name)")
			}
			v, _ = named.Get(format[j+1 : j+end])
			j += end + 1
		}
		spec := j
		for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			r.fail("format: incomplete format")
		}
		verb := format[j]
		if verb == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		if v == nil && named == nil {
			if next >= len(list) {
				r.fail("format: not enough arguments for format string")
			}
			v = list[next]
			next++
		}
		flags := format[spec:j]
		switch verb {
		case 's':
			b.WriteString(fmt.Sprintf("%"+flags+"s", r.str(v)))
		case 'r':
			bb := &boundedBuilder{max: 1 << 20}
			writeRepr(bb, v, 0)
			b.WriteString(fmt.Sprintf("%"+flags+"s", bb.String()))
		case 'd', 'i':
			n, ok := toNumber(v)
			if !ok {
				r.fail("format: %%d needs a number, not %s", typeName(v))
			}
			b.WriteString(fmt.Sprintf("%"+flags+"d", int64(n)))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			n, ok := toNumber(v)
			if !ok {
				r.fail("format: %%%c needs a number, not %s", verb, typeName(v))
			}
			if !strings.Contains(flags, ".") {
				flags += ".6"
			}
			b.WriteString(fmt.Sprintf("%"+flags+string(verb), n))
		case 'x', 'X', 'o':
			n, ok := v.(int64)
			if !ok {
				r.fail("format: %%%c needs an integer", verb)
			}
			b.WriteString(fmt.Sprintf("%"+flags+string(verb), n))
		default:
			r.fail("format: unsupported format character %q", verb)
		}
		i = j
	}
	r.newString(int64(b.Len()))
	return b.String()
}

// strFormat is a subset of Python's str.format: {}, {0}, {name}, {name.attr},
// with the conversion and format spec ignored except for {:.Nf}.
func (r *renderer) strFormat(format string, args []Value, kw *Dict) string {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '{' && i+1 < len(format) && format[i+1] == '{':
			b.WriteByte('{')
			i++
			continue
		case c == '}' && i+1 < len(format) && format[i+1] == '}':
			b.WriteByte('}')
			i++
			continue
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(format[i:], '}')
		if end < 0 {
			r.fail("str.format: single '{' encountered")
		}
		field := format[i+1 : i+end]
		i += end
		field, spec, _ := strings.Cut(field, ":")
		field, _, _ = strings.Cut(field, "!")
		name, path, _ := strings.Cut(field, ".")
		var v Value
		switch n, err := strconv.Atoi(name); {
		case name == "":
			v = arg(args, nil, auto, "", Undefined{})
			auto++
		case err == nil:
			v = arg(args, nil, n, "", Undefined{})
		default:
			v = arg(nil, kw, 0, name, Undefined{Name: name})
		}
		if path != "" {
			v = r.attribute(v, path)
		}
		if strings.HasPrefix(spec, ".") && strings.HasSuffix(spec, "f") {
			if p, err := strconv.Atoi(spec[1 : len(spec)-1]); err == nil {
				if f, ok := toNumber(v); ok {
					b.WriteString(strconv.FormatFloat(f, 'f', min(p, 64), 64))
					continue
				}
			}
		}
		b.WriteString(r.str(v))
		if b.Len() > r.lim.Output {
			r.newString(int64(b.Len()))
		}
	}
	r.newString(int64(b.Len()))
	return b.String()
}
