package jinja

import (
	"strings"
	"unicode"
)

// Methods of Python's dict, str and list that templates call. Mutating
// methods exist (so "x.append" resolves) but refuse to run, as in the
// immutable sandbox HF renders with.

func method(name string, fn func(r *renderer, args []Value, kw *Dict) Value) *Func {
	return &Func{Name: name, Fn: fn}
}

func refused(typ, name string) *Func {
	return method(name, func(r *renderer, _ []Value, _ *Dict) Value {
		r.fail("%s.%s() is not allowed: templates cannot modify their data", typ, name)
		return nil
	})
}

// arg returns positional argument i, or keyword name, or def.
func arg(args []Value, kw *Dict, i int, name string, def Value) Value {
	if i < len(args) {
		return args[i]
	}
	if kw != nil {
		if v, ok := kw.Get(name); ok {
			return v
		}
	}
	return def
}

func dictMethod(d *Dict, name string) *Func {
	switch name {
	case "get":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			if v, ok := d.Get(arg(args, kw, 0, "key", nil)); ok {
				return v
			}
			return arg(args, kw, 1, "default", nil)
		})
	case "items":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return r.dictItems(d) })
	case "keys":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value {
			r.charge(int64(16 * d.Len()))
			return &List{Items: append([]Value(nil), d.keys...)}
		})
	case "values":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value {
			r.charge(int64(16 * d.Len()))
			return &List{Items: append([]Value(nil), d.vals...)}
		})
	case "update", "pop", "popitem", "setdefault", "clear", "copy", "fromkeys":
		return refused("dict", name)
	}
	return nil
}

func (r *renderer) dictItems(d *Dict) *List {
	r.charge(int64(64 * d.Len()))
	items := make([]Value, d.Len())
	for i, k := range d.keys {
		items[i] = &List{Items: []Value{k, d.vals[i]}, Tuple: true}
	}
	return &List{Items: items}
}

func listMethod(l *List, name string) *Func {
	switch name {
	case "index":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			x := arg(args, kw, 0, "value", nil)
			for i, it := range l.Items {
				if equal(it, x) {
					return int64(i)
				}
			}
			r.fail("%s is not in list", r.str(x))
			return nil
		})
	case "count":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			x, n := arg(args, kw, 0, "value", nil), int64(0)
			for _, it := range l.Items {
				if equal(it, x) {
					n++
				}
			}
			return n
		})
	case "append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "copy":
		return refused("list", name)
	}
	return nil
}

func (r *renderer) strArg(args []Value, kw *Dict, i int, name string) (string, bool) {
	v := arg(args, kw, i, name, nil)
	if v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.fail("str.%s argument must be str or None, not %s", name, typeName(v))
	}
	return s, true
}

func strMethod(s, name string) *Func {
	strip := func(left, right bool) *Func {
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			chars, _ := r.strArg(args, kw, 0, "chars")
			return pyStrip(s, chars, left, right)
		})
	}
	switch name {
	case "strip":
		return strip(true, true)
	case "lstrip":
		return strip(true, false)
	case "rstrip":
		return strip(false, true)
	case "upper":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return strings.ToUpper(s) })
	case "lower":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return strings.ToLower(s) })
	case "title":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return pyTitle(s) })
	case "capitalize":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return capitalize(s) })
	case "split", "rsplit":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			sep, hasSep := r.strArg(args, kw, 0, "sep")
			maxSplit := int64(-1)
			if n, ok := arg(args, kw, 1, "maxsplit", int64(-1)).(int64); ok {
				maxSplit = n
			}
			return r.split(s, sep, hasSep, maxSplit, name == "rsplit")
		})
	case "splitlines":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value { return r.strList(splitLines(s)) })
	case "startswith", "endswith":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			test := strings.HasPrefix
			if name == "endswith" {
				test = strings.HasSuffix
			}
			switch p := arg(args, kw, 0, "prefix", nil).(type) {
			case string:
				return test(s, p)
			case *List:
				for _, it := range p.Items {
					if ps, ok := it.(string); ok && test(s, ps) {
						return true
					}
				}
				return false
			}
			r.fail("str.%s needs a str or a tuple of str", name)
			return nil
		})
	case "replace":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			old, _ := r.strArg(args, kw, 0, "old")
			nw, _ := r.strArg(args, kw, 1, "new")
			n := -1
			if c, ok := arg(args, kw, 2, "count", int64(-1)).(int64); ok {
				n = int(c)
			}
			return r.replace(s, old, nw, n)
		})
	case "find", "rfind", "index", "rindex", "count":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			sub, _ := r.strArg(args, kw, 0, "sub")
			var i int
			switch name {
			case "count":
				return int64(strings.Count(s, sub))
			case "find", "index":
				i = strings.Index(s, sub)
			default:
				i = strings.LastIndex(s, sub)
			}
			if i < 0 {
				if name == "index" || name == "rindex" {
					r.fail("substring not found")
				}
				return int64(-1)
			}
			return int64(runeLen(s[:i]))
		})
	case "join":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value {
			items := r.iterate(arg(args, kw, 0, "iterable", nil), 0)
			parts := make([]string, len(items))
			for i, it := range items {
				p, ok := it.(string)
				if !ok {
					r.fail("sequence item %d: expected str instance, %s found", i, typeName(it))
				}
				parts[i] = p
			}
			return r.join(parts, s)
		})
	case "format":
		return method(name, func(r *renderer, args []Value, kw *Dict) Value { return r.strFormat(s, args, kw) })
	case "isdigit", "isnumeric", "isdecimal":
		return isAll(name, s, unicode.IsDigit)
	case "isalpha":
		return isAll(name, s, unicode.IsLetter)
	case "isalnum":
		return isAll(name, s, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) })
	case "isspace":
		return isAll(name, s, pySpace)
	case "isupper", "islower":
		return method(name, func(r *renderer, _ []Value, _ *Dict) Value {
			cased := false
			for _, c := range s {
				if unicode.IsUpper(c) || unicode.IsLower(c) {
					cased = true
					if (name == "isupper") != unicode.IsUpper(c) {
						return false
					}
				}
			}
			return cased
		})
	}
	return nil
}

func isAll(name, s string, f func(rune) bool) *Func {
	return method(name, func(r *renderer, _ []Value, _ *Dict) Value {
		if s == "" {
			return false
		}
		for _, c := range s {
			if !f(c) {
				return false
			}
		}
		return true
	})
}

func (r *renderer) strList(parts []string) *List {
	r.charge(int64(16 * len(parts)))
	items := make([]Value, len(parts))
	for i, p := range parts {
		items[i] = p
	}
	return &List{Items: items}
}

// split is Python's str.split / str.rsplit.
func (r *renderer) split(s, sep string, hasSep bool, maxSplit int64, fromRight bool) *List {
	if hasSep && sep == "" {
		r.fail("empty separator")
	}
	var parts []string
	if !hasSep {
		fields := strings.FieldsFunc(s, pySpace)
		if maxSplit < 0 || int(maxSplit) >= len(fields) {
			return r.strList(fields)
		}
		// Keep the unsplit remainder as Python does.
		rest := s
		if !fromRight {
			rest = strings.TrimLeftFunc(rest, pySpace)
			for range maxSplit {
				i := strings.IndexFunc(rest, pySpace)
				parts = append(parts, rest[:i])
				rest = strings.TrimLeftFunc(rest[i:], pySpace)
			}
			return r.strList(append(parts, rest))
		}
		rest = strings.TrimRightFunc(rest, pySpace)
		for range maxSplit {
			i := strings.LastIndexFunc(rest, pySpace)
			parts = append([]string{rest[i+1:]}, parts...)
			rest = strings.TrimRightFunc(rest[:i], pySpace)
		}
		return r.strList(append([]string{rest}, parts...))
	}
	if maxSplit < 0 {
		return r.strList(strings.Split(s, sep))
	}
	if !fromRight {
		return r.strList(strings.SplitN(s, sep, int(maxSplit)+1))
	}
	rest := s
	for range maxSplit {
		i := strings.LastIndex(rest, sep)
		if i < 0 {
			break
		}
		parts = append([]string{rest[i+len(sep):]}, parts...)
		rest = rest[:i]
	}
	return r.strList(append([]string{rest}, parts...))
}

// replace is str.replace within the allocation budget.
func (r *renderer) replace(s, old, nw string, n int) string {
	count := strings.Count(s, old)
	if old == "" {
		count = runeLen(s) + 1
	}
	if n >= 0 && n < count {
		count = n
	}
	r.newString(int64(len(s)) + int64(count)*int64(max(len(nw)-len(old), 0)))
	return strings.Replace(s, old, nw, n)
}

func (r *renderer) join(parts []string, sep string) string {
	size := int64(len(sep)) * int64(max(len(parts)-1, 0))
	for _, p := range parts {
		size += int64(len(p))
	}
	r.newString(size)
	return strings.Join(parts, sep)
}

// pyTitle is Python's str.title: a cased letter after an uncased character
// starts a word.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, c := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(c))
		} else {
			b.WriteRune(unicode.ToTitle(c))
		}
		prevCased = unicode.IsUpper(c) || unicode.IsLower(c) || unicode.IsTitle(c)
	}
	return b.String()
}

// capitalize is str.capitalize: first character upper, the rest lower.
func capitalize(s string) string {
	for i, c := range s {
		return string(unicode.ToTitle(c)) + strings.ToLower(s[i+len(string(c)):])
	}
	return s
}

// splitLines is str.splitlines(): no empty string after a final break.
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i, c := range s {
		switch c {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			if c == '\n' && i > 0 && s[i-1] == '\r' {
				start = i + 1
				continue
			}
			lines = append(lines, s[start:i])
			start = i + len(string(c))
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
