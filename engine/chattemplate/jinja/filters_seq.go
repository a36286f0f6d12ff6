package jinja

import (
	"slices"
	"strconv"
	"strings"
)

// Filters over sequences and dicts.

func fBatch(r *renderer, v Value, a []Value, kw *Dict) Value {
	n, _ := arg(a, kw, 0, "linecount", int64(1)).(int64)
	if n <= 0 {
		r.fail("batch size must be positive")
	}
	fill, hasFill := arg(a, kw, 1, "fill_with", nil), len(a) > 1
	if _, ok := kwGet(kw, "fill_with"); ok {
		hasFill = true
	}
	items := r.seq(v)
	var out []Value
	for i := 0; i < len(items); i += int(n) {
		row := slices.Clone(items[i:min(i+int(n), len(items))])
		for hasFill && len(row) < int(n) {
			row = append(row, fill)
		}
		out = append(out, &List{Items: row})
	}
	r.charge(int64(16 * (len(items) + len(out))))
	return &List{Items: out}
}

// sortKey lower-cases strings unless case-sensitive, as Jinja2's
// ignore_case does.
func sortKey(v Value, caseSensitive bool) Value {
	if s, ok := v.(string); ok && !caseSensitive {
		return strings.ToLower(s)
	}
	return v
}

func fDictsort(r *renderer, v Value, a []Value, kw *Dict) Value {
	d, ok := v.(*Dict)
	if !ok {
		r.fail("dictsort needs a dict, got %s", typeName(v))
	}
	cs := boolArg(a, kw, 0, "case_sensitive")
	by, _ := arg(a, kw, 1, "by", "key").(string)
	pos := 0
	switch by {
	case "key":
	case "value":
		pos = 1
	default:
		r.fail("dictsort: you can only sort by either 'key' or 'value'")
	}
	items := r.dictItems(d).Items
	r.steps += len(items)
	sign := 1
	if boolArg(a, kw, 2, "reverse") {
		sign = -1 // Python's sorted(reverse=True) keeps equal keys in order
	}
	slices.SortStableFunc(items, func(x, y Value) int {
		return sign * r.compare(sortKey(x.(*List).Items[pos], cs), sortKey(y.(*List).Items[pos], cs))
	})
	return &List{Items: items}
}

// attribute reads a dotted attribute path ("a.b" or "0"), as Jinja2's
// make_attrgetter does.
func (r *renderer) attribute(v Value, path Value) Value {
	if n, ok := path.(int64); ok {
		return r.getitem(v, n, 0)
	}
	for _, part := range strings.Split(r.str(path), ".") {
		if n, err := strconv.ParseInt(part, 10, 64); err == nil {
			v = r.getitem(v, n, 0)
		} else {
			v = r.getitem(v, part, 0)
		}
	}
	return v
}

func fJoin(r *renderer, v Value, a []Value, kw *Dict) Value {
	sep := r.str(arg(a, kw, 0, "d", ""))
	attr := arg(a, kw, 1, "attribute", nil)
	items := r.seq(v)
	parts := make([]string, len(items))
	for i, it := range items {
		if attr != nil {
			it = r.attribute(it, attr)
		}
		parts[i] = r.str(it)
	}
	return r.join(parts, sep)
}

func fList(r *renderer, v Value, _ []Value, _ *Dict) Value {
	items := r.seq(v)
	r.charge(int64(16 * len(items)))
	return &List{Items: slices.Clone(items)}
}

func fMap(r *renderer, v Value, a []Value, kw *Dict) Value {
	items := r.seq(v)
	out := make([]Value, len(items))
	r.charge(int64(16 * len(items)))
	if attr, ok := kwGet(kw, "attribute"); ok {
		def, hasDef := kwGet(kw, "default")
		for i, it := range items {
			out[i] = r.attribute(it, attr)
			if _, undef := out[i].(Undefined); undef && hasDef {
				out[i] = def
			}
		}
		return &List{Items: out}
	}
	if len(a) == 0 {
		r.fail("map needs a filter name or attribute=")
	}
	name := r.str(a[0])
	for i, it := range items {
		out[i] = r.applyFilter(name, it, a[1:])
	}
	return &List{Items: out}
}

func kwGet(kw *Dict, name string) (Value, bool) {
	if kw == nil {
		return nil, false
	}
	return kw.Get(name)
}

func (r *renderer) minMax(v Value, kw *Dict, sign int) Value {
	items := r.seq(v)
	if len(items) == 0 {
		return Undefined{Name: "min/max of an empty sequence"}
	}
	cs, _ := kwGet(kw, "case_sensitive")
	attr, hasAttr := kwGet(kw, "attribute")
	key := func(x Value) Value {
		if hasAttr {
			x = r.attribute(x, attr)
		}
		return sortKey(x, truthy(cs))
	}
	best := items[0]
	for _, it := range items[1:] {
		if r.compare(key(it), key(best))*sign > 0 {
			best = it
		}
	}
	return best
}

// selectFilter is select/reject (byAttr false) and selectattr/rejectattr.
func (r *renderer) selectFilter(v Value, a []Value, byAttr, keep bool) Value {
	items := r.seq(v)
	var attr Value
	if byAttr {
		if len(a) == 0 {
			r.fail("selectattr/rejectattr need an attribute name")
		}
		attr, a = a[0], a[1:]
	}
	var out []Value
	for _, it := range items {
		x := it
		if byAttr {
			x = r.attribute(it, attr)
		}
		ok := truthy(x)
		if len(a) > 0 {
			ok = r.runTest(r.str(a[0]), x, a[1:], 0)
		}
		if ok == keep {
			out = append(out, it)
		}
	}
	r.charge(int64(16 * len(out)))
	return &List{Items: out}
}

func fReverse(r *renderer, v Value, _ []Value, _ *Dict) Value {
	if s, ok := v.(string); ok {
		runes := []rune(s)
		slices.Reverse(runes)
		return string(runes)
	}
	items := slices.Clone(r.seq(v))
	r.charge(int64(16 * len(items)))
	slices.Reverse(items)
	return &List{Items: items}
}

func fSort(r *renderer, v Value, a []Value, kw *Dict) Value {
	rev, cs := boolArg(a, kw, 0, "reverse"), boolArg(a, kw, 1, "case_sensitive")
	attr := arg(a, kw, 2, "attribute", nil)
	items := slices.Clone(r.seq(v))
	r.charge(int64(16 * len(items)))
	key := func(x Value) Value {
		if attr != nil {
			x = r.attribute(x, attr)
		}
		return sortKey(x, cs)
	}
	slices.SortStableFunc(items, func(x, y Value) int {
		c := r.compare(key(x), key(y))
		if rev {
			return -c
		}
		return c
	})
	return &List{Items: items}
}

func fSum(r *renderer, v Value, a []Value, kw *Dict) Value {
	attr := arg(a, kw, 0, "attribute", nil)
	total := arg(a, kw, 1, "start", int64(0))
	for _, it := range r.seq(v) {
		if attr != nil {
			it = r.attribute(it, attr)
		}
		total = r.arith("+", total, it, 0)
	}
	return total
}

func fUnique(r *renderer, v Value, a []Value, kw *Dict) Value {
	cs := boolArg(a, kw, 0, "case_sensitive")
	attr := arg(a, kw, 1, "attribute", nil)
	var out, seen []Value
	for _, it := range r.seq(v) {
		k := it
		if attr != nil {
			k = r.attribute(it, attr)
		}
		k = sortKey(k, cs)
		if !slices.ContainsFunc(seen, func(s Value) bool { return equal(s, k) }) {
			seen = append(seen, k)
			out = append(out, it)
		}
		r.steps += len(seen) / 64 // quadratic in the worst case: charge for it
	}
	r.charge(int64(16 * len(out)))
	return &List{Items: out}
}
