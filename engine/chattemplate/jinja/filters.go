package jinja

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Jinja2's built-in filters (jinja2/filters.py) that chat templates use,
// plus Hugging Face's tojson.

type filterFn func(r *renderer, v Value, args []Value, kw *Dict) Value

var filters map[string]filterFn

func init() {
	filters = map[string]filterFn{
		"abs": fAbs,
		"attr": func(r *renderer, v Value, a []Value, kw *Dict) Value {
			return r.getattr(v, r.str(arg(a, kw, 0, "name", "")), 0)
		},
		"batch":       fBatch,
		"capitalize":  func(r *renderer, v Value, _ []Value, _ *Dict) Value { return capitalize(r.str(v)) },
		"center":      fCenter,
		"count":       fLength,
		"d":           fDefault,
		"default":     fDefault,
		"dictsort":    fDictsort,
		"e":           fEscape,
		"escape":      fEscape,
		"first":       fFirst,
		"float":       fFloat,
		"forceescape": fEscape,
		"format":      func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.printf(r.str(v), formatArgs(a, kw)) },
		"indent":      fIndent,
		"int":         fInt,
		"items":       fItems,
		"join":        fJoin,
		"last":        fLast,
		"length":      fLength,
		"list":        fList,
		"lower":       func(r *renderer, v Value, _ []Value, _ *Dict) Value { return strings.ToLower(r.str(v)) },
		"map":         fMap,
		"max":         func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.minMax(v, kw, 1) },
		"min":         func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.minMax(v, kw, -1) },
		"reject":      func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.selectFilter(v, a, false, false) },
		"rejectattr":  func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.selectFilter(v, a, true, false) },
		"replace":     fReplace,
		"reverse":     fReverse,
		"round":       fRound,
		"safe":        func(r *renderer, v Value, _ []Value, _ *Dict) Value { return r.str(v) },
		"select":      func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.selectFilter(v, a, false, true) },
		"selectattr":  func(r *renderer, v Value, a []Value, kw *Dict) Value { return r.selectFilter(v, a, true, true) },
		"sort":        fSort,
		"string":      func(r *renderer, v Value, _ []Value, _ *Dict) Value { return r.str(v) },
		"striptags":   fStriptags,
		"sum":         fSum,
		"title":       fTitle,
		"tojson":      fTojson,
		"trim":        fTrim,
		"truncate":    fTruncate,
		"unique":      fUnique,
		"upper":       func(r *renderer, v Value, _ []Value, _ *Dict) Value { return strings.ToUpper(r.str(v)) },
		"wordcount": func(r *renderer, v Value, _ []Value, _ *Dict) Value {
			return int64(len(wordRe.FindAllStringIndex(r.str(v), -1)))
		},
	}
}

var wordRe = regexp.MustCompile(`[\p{L}\p{N}_]+`)

func (r *renderer) filter(f *filterExpr, v Value, sc *scope) Value {
	r.tick()
	fn, ok := filters[f.name]
	if !ok {
		r.fail("line %d: no filter named %q", f.line, f.name)
	}
	args, kw := r.args(f.args, f.kw, f.kwv, sc)
	return fn(r, v, args, kw)
}

func (r *renderer) applyFilter(name string, v Value, args []Value) Value {
	fn, ok := filters[name]
	if !ok {
		r.fail("no filter named %q", name)
	}
	r.tick()
	return fn(r, v, args, nil)
}

func boolArg(args []Value, kw *Dict, i int, name string) bool {
	return truthy(arg(args, kw, i, name, false))
}

// seq returns what a filter iterates over, charging one step per item.
func (r *renderer) seq(v Value) []Value {
	items := r.iterate(v, 0)
	r.steps += len(items)
	r.tick()
	return items
}

func fAbs(r *renderer, v Value, _ []Value, _ *Dict) Value {
	switch n := v.(type) {
	case int64:
		if n == math.MinInt64 {
			r.fail("integer overflow")
		}
		if n < 0 {
			return -n
		}
		return n
	case float64:
		return math.Abs(n)
	case bool:
		if n {
			return int64(1)
		}
		return int64(0)
	}
	r.fail("bad operand type for abs(): '%s'", typeName(v))
	return nil
}

func fCenter(r *renderer, v Value, a []Value, kw *Dict) Value {
	s := r.str(v)
	w, _ := arg(a, kw, 0, "width", int64(80)).(int64)
	n := runeLen(s)
	if int64(n) >= w || w > 1<<20 {
		return s
	}
	marg := int(w) - n
	left := marg/2 + (marg & int(w) & 1) // CPython's str.center
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", marg-left)
}

func fDefault(r *renderer, v Value, a []Value, kw *Dict) Value {
	def := arg(a, kw, 0, "default_value", "")
	if _, undef := v.(Undefined); undef || (boolArg(a, kw, 1, "boolean") && !truthy(v)) {
		return def
	}
	return v
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

func fEscape(r *renderer, v Value, _ []Value, _ *Dict) Value {
	s := r.str(v)
	r.charge(int64(len(s)))
	return htmlEscaper.Replace(s)
}

func fFirst(r *renderer, v Value, _ []Value, _ *Dict) Value {
	if s, ok := v.(string); ok {
		for _, c := range s {
			return string(c)
		}
		return Undefined{Name: "first"}
	}
	if items := r.iterate(v, 0); len(items) > 0 {
		return items[0]
	}
	return Undefined{Name: "first"}
}

func fLast(r *renderer, v Value, _ []Value, _ *Dict) Value {
	if s, ok := v.(string); ok {
		runes := []rune(s)
		if len(runes) > 0 {
			return string(runes[len(runes)-1])
		}
		return Undefined{Name: "last"}
	}
	if items := r.iterate(v, 0); len(items) > 0 {
		return items[len(items)-1]
	}
	return Undefined{Name: "last"}
}

func fFloat(r *renderer, v Value, a []Value, kw *Dict) Value {
	def := arg(a, kw, 0, "default", 0.0)
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case bool:
		if x {
			return 1.0
		}
		return 0.0
	case string:
		if f, err := strconv.ParseFloat(strings.ReplaceAll(pyStrip(x, "", true, true), "_", ""), 64); err == nil {
			return f
		}
	}
	return def
}

func fInt(r *renderer, v Value, a []Value, kw *Dict) Value {
	def := arg(a, kw, 0, "default", int64(0))
	base, _ := arg(a, kw, 1, "base", int64(10)).(int64)
	switch x := v.(type) {
	case int64:
		return x
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1<<63 {
			return def
		}
		return int64(x)
	case string:
		s := strings.ReplaceAll(pyStrip(x, "", true, true), "_", "")
		if n, err := strconv.ParseInt(s, int(base), 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(f) < 1<<63 {
			return int64(f)
		}
	}
	return def
}

func fIndent(r *renderer, v Value, a []Value, kw *Dict) Value {
	s := r.str(v)
	ind := "    "
	switch w := arg(a, kw, 0, "width", int64(4)).(type) {
	case int64:
		ind = strings.Repeat(" ", int(max(min(w, 1<<10), 0)))
	case string:
		ind = w
	}
	first, blank := boolArg(a, kw, 1, "first"), boolArg(a, kw, 2, "blank")
	lines := splitLines(s + "\n")
	var b strings.Builder
	r.charge(int64(len(s) + len(ind)*(len(lines)+1)))
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
			if blank || line != "" {
				b.WriteString(ind)
			}
		}
		b.WriteString(line)
	}
	if first {
		return ind + b.String()
	}
	return b.String()
}

func fItems(r *renderer, v Value, _ []Value, _ *Dict) Value {
	switch d := v.(type) {
	case *Dict:
		return r.dictItems(d)
	case Undefined:
		return &List{}
	}
	r.fail("items needs a dict, got %s", typeName(v))
	return nil
}

func fLength(r *renderer, v Value, _ []Value, _ *Dict) Value {
	switch x := v.(type) {
	case string:
		return int64(runeLen(x))
	case *List:
		return int64(len(x.Items))
	case *Dict:
		return int64(x.Len())
	case *Namespace:
		return int64(x.attrs.Len())
	case Undefined:
		return int64(0)
	}
	r.fail("object of type '%s' has no len()", typeName(v))
	return nil
}

func fReplace(r *renderer, v Value, a []Value, kw *Dict) Value {
	n := -1
	if c, ok := arg(a, kw, 2, "count", nil).(int64); ok {
		n = int(c)
	}
	return r.replace(r.str(v), r.str(arg(a, kw, 0, "old", "")), r.str(arg(a, kw, 1, "new", "")), n)
}

func fRound(r *renderer, v Value, a []Value, kw *Dict) Value {
	x, ok := toNumber(v)
	if !ok {
		r.fail("round needs a number, got %s", typeName(v))
	}
	prec, _ := arg(a, kw, 0, "precision", int64(0)).(int64)
	method := r.str(arg(a, kw, 1, "method", "common"))
	p := math.Pow(10, float64(prec))
	switch method {
	case "common":
		return math.RoundToEven(x*p) / p // Python's round() rounds half to even
	case "floor":
		return math.Floor(x*p) / p
	case "ceil":
		return math.Ceil(x*p) / p
	}
	r.fail("round: method must be 'common', 'ceil' or 'floor'")
	return nil
}

var tagRe = regexp.MustCompile(`(<!--.*?-->|<[^>]*>)`)

func fStriptags(r *renderer, v Value, _ []Value, _ *Dict) Value {
	s := tagRe.ReplaceAllString(r.str(v), "")
	return strings.Join(strings.FieldsFunc(s, pySpace), " ")
}

// fTitle is Jinja2's do_title: words start after '-', space or an opening
// bracket.
func fTitle(r *renderer, v Value, _ []Value, _ *Dict) Value {
	var b strings.Builder
	start := true
	for _, c := range r.str(v) {
		if start {
			b.WriteRune(unicode.ToTitle(c))
		} else {
			b.WriteRune(unicode.ToLower(c))
		}
		start = c == '-' || pySpace(c) || strings.ContainsRune("({[<", c)
	}
	return b.String()
}

func fTrim(r *renderer, v Value, a []Value, kw *Dict) Value {
	chars, _ := arg(a, kw, 0, "chars", nil).(string)
	return pyStrip(r.str(v), chars, true, true)
}

func fTruncate(r *renderer, v Value, a []Value, kw *Dict) Value {
	s := r.str(v)
	length, _ := arg(a, kw, 0, "length", int64(255)).(int64)
	killwords := boolArg(a, kw, 1, "killwords")
	end := r.str(arg(a, kw, 2, "end", "..."))
	leeway, ok := arg(a, kw, 3, "leeway", int64(5)).(int64)
	if !ok {
		leeway = 5
	}
	runes := []rune(s)
	if int64(len(runes)) <= length+leeway {
		return s
	}
	cut := max(int(length)-runeLen(end), 0)
	if killwords {
		return string(runes[:cut]) + end
	}
	head := string(runes[:cut])
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return head + end
}

func fTojson(r *renderer, v Value, a []Value, kw *Dict) Value {
	// HF's tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
	opt := jsonOptions{itemSep: ", ", keySep: ": "}
	opt.ascii = boolArg(a, kw, 0, "ensure_ascii")
	if ind := arg(a, kw, 1, "indent", nil); ind != nil {
		switch x := ind.(type) {
		case int64:
			opt.indent = strings.Repeat(" ", int(max(min(x, 64), 0)))
		case string:
			opt.indent = x
		}
		opt.pretty, opt.itemSep = true, ","
	}
	if seps, ok := arg(a, kw, 2, "separators", nil).(*List); ok && len(seps.Items) == 2 {
		opt.itemSep, opt.keySep = r.str(seps.Items[0]), r.str(seps.Items[1])
	}
	opt.sortKeys = boolArg(a, kw, 3, "sort_keys")
	return r.toJSON(v, opt)
}

func formatArgs(a []Value, kw *Dict) Value {
	if kw != nil && kw.Len() > 0 {
		return kw
	}
	if len(a) == 1 {
		return a[0]
	}
	return &List{Items: a, Tuple: true}
}
