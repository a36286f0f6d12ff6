package grammar

import (
	"fmt"
	"math"
	"perch/engine/grammar/regex"
	"sort"
	"strings"
)

// keyword applies one schema keyword to n (combinators are handled by
// compileObject after the others).
func (c *compiler) keyword(n *node, s *object, k string, v any, path string) error {
	bad := func(format string, args ...any) error {
		return &CompileError{Path: path, Msg: k + ": " + fmt.Sprintf(format, args...)}
	}
	switch k {
	case "$ref", "allOf", "anyOf", "oneOf":
		return nil
	case "type":
		var t typeSet
		switch x := v.(type) {
		case string:
			tt, ok := typeOf(x)
			if !ok {
				return bad("unknown type %q", x)
			}
			t = tt
		case []any:
			for _, e := range x {
				name, _ := e.(string)
				tt, ok := typeOf(name)
				if !ok {
					return bad("unknown type %v", e)
				}
				t |= tt
			}
		default:
			return bad("must be a string or an array of strings")
		}
		n.types &= t
	case "enum", "const":
		vals := []any{v}
		if k == "enum" {
			a, ok := v.([]any)
			if !ok {
				return bad("must be an array")
			}
			if len(a) > MaxEnum {
				return bad("%d values, over the limit of %d", len(a), MaxEnum)
			}
			vals = a
		}
		if n.enum {
			vals = intersectValues(n.enumVals, vals)
		}
		n.enum, n.enumVals = true, vals
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		x, ok := count(v)
		if !ok {
			return bad("must be a non-negative integer")
		}
		switch k {
		case "minLength":
			n.minLen = x
		case "maxLength":
			n.maxLen = x
		case "minItems":
			n.minItems = x
		case "maxItems":
			n.maxItems = x
		case "minProperties":
			n.minProps = x
		case "maxProperties":
			n.maxProps = x
		}
	case "pattern", "format":
		str, ok := v.(string)
		if !ok {
			return bad("must be a string")
		}
		var re *regex.NFA
		var err error
		if k == "pattern" {
			re, err = regex.Compile(str)
		} else {
			re, err = formatRegex(str)
			n.format = str
		}
		if err != nil {
			return bad("%v", err)
		}
		if re == nil { // a format nobody asserts
			return nil
		}
		if n.re != nil {
			return bad("a pattern together with a format is not supported")
		}
		n.re = regex.NewDFA(re)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if b, ok := v.(bool); ok && (k == "exclusiveMinimum" || k == "exclusiveMaximum") { // draft 4
			if k == "exclusiveMinimum" {
				n.exMin = b
			} else {
				n.exMax = b
			}
			return nil
		}
		x, ok := number(v)
		if !ok {
			return bad("must be a number")
		}
		switch k {
		case "minimum":
			if !n.hasMin || x > n.min {
				n.hasMin, n.min = true, x
			}
		case "maximum":
			if !n.hasMax || x < n.max {
				n.hasMax, n.max = true, x
			}
		case "exclusiveMinimum":
			if !n.hasMin || x >= n.min {
				n.hasMin, n.min, n.exMin = true, x, true
			}
		case "exclusiveMaximum":
			if !n.hasMax || x <= n.max {
				n.hasMax, n.max, n.exMax = true, x, true
			}
		}
	case "multipleOf":
		x, ok := number(v)
		if !ok || x <= 0 {
			return bad("must be a positive number")
		}
		if x == 1 || (x == math.Trunc(x) && n.types&tFrac == 0 && x == 1) {
			n.types &^= tFrac
			return nil
		}
		return bad("multipleOf other than 1 is not supported")
	case "properties":
		o, ok := v.(*object)
		if !ok {
			return bad("must be an object")
		}
		for i, name := range o.keys {
			sub, err := c.structural(o.vals[i], path+"/properties/"+escapePointer(name))
			if err != nil {
				return err
			}
			n.props = append(n.props, prop{name: name, n: sub})
		}
	case "additionalProperties":
		sub, err := c.structural(v, path+"/additionalProperties")
		if err != nil {
			return err
		}
		n.addl = sub
	case "items":
		if a, ok := v.([]any); ok { // draft 4-2019 tuple form
			for i, e := range a {
				sub, err := c.structural(e, fmt.Sprintf("%s/items/%d", path, i))
				if err != nil {
					return err
				}
				n.prefix = append(n.prefix, sub)
			}
			return nil
		}
		sub, err := c.structural(v, path+"/items")
		if err != nil {
			return err
		}
		n.items = sub
	case "additionalItems":
		if _, tuple := s.get("items"); !tuple {
			return nil
		}
		if it, _ := s.get("items"); it != nil {
			if _, isArr := it.([]any); !isArr {
				return nil // ignored beside a single items schema
			}
		}
		sub, err := c.structural(v, path+"/additionalItems")
		if err != nil {
			return err
		}
		n.items = sub
	case "prefixItems":
		a, ok := v.([]any)
		if !ok {
			return bad("must be an array of schemas")
		}
		for i, e := range a {
			sub, err := c.structural(e, fmt.Sprintf("%s/prefixItems/%d", path, i))
			if err != nil {
				return err
			}
			n.prefix = append(n.prefix, sub)
		}
	default:
		if unsupported[k] {
			return &CompileError{Path: path, Msg: fmt.Sprintf("keyword %q is not supported", k)}
		}
		// annotations and keywords outside JSON Schema's vocabularies assert nothing
	}
	return nil
}

// required marks the named properties required; a name without a
// definition is a property whose value follows additionalProperties.
func (c *compiler) required(n *node, v any, path string) error {
	a, ok := v.([]any)
	if !ok {
		return &CompileError{Path: path, Msg: "required: must be an array of strings"}
	}
	for _, e := range a {
		name, ok := e.(string)
		if !ok {
			return &CompileError{Path: path, Msg: "required: must be an array of strings"}
		}
		if i := propIndex(n.props, name); i >= 0 {
			n.props[i].required = true
			continue
		}
		sub := n.addl
		if sub == nil {
			sub = nothing
		}
		n.props = append(n.props, prop{name: name, n: sub, required: true})
	}
	return nil
}

// nothing matches no value.
var nothing = &node{done: true}

func propIndex(props []prop, name string) int {
	for i, p := range props {
		if p.name == name {
			return i
		}
	}
	return -1
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// sortedProps is props in the template's dictsort order (case-insensitive).
func sortedProps(props []prop) []prop {
	out := append([]prop(nil), props...)
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i].name) < strings.ToLower(out[j].name) })
	return out
}
