package grammar

import "fmt"

// merge returns a node matching exactly the values both a and b match
// (allOf, and $ref/anyOf beside other keywords). An anyOf distributes.
func (c *compiler) merge(a, b *node, path string, depth int) (*node, error) {
	if a.done && isAnything(a) {
		return b, nil
	}
	if b.done && isAnything(b) {
		return a, nil
	}
	if !a.done || !b.done {
		return nil, &CompileError{Path: path, Msg: "allOf (or keywords beside $ref) with a recursive $ref is not supported"}
	}
	if depth > 16 {
		return nil, &CompileError{Path: path, Msg: "allOf merges nested over 16 deep"}
	}
	if a.anyOf == nil && b.anyOf != nil {
		a, b = b, a
	}
	if a.anyOf != nil {
		out, err := c.newNode(path)
		if err != nil {
			return nil, err
		}
		for _, alt := range a.anyOf {
			m, err := c.merge(alt, b, path, depth+1)
			if err != nil {
				return nil, err
			}
			out.anyOf = append(out.anyOf, m)
		}
		out.done = true
		return out, nil
	}
	n, err := c.newNode(path)
	if err != nil {
		return nil, err
	}
	*n = *a
	n.done = true
	n.types = a.types & b.types
	if b.enum {
		if a.enum {
			n.enumVals = intersectValues(a.enumVals, b.enumVals)
		} else {
			n.enum, n.enumVals = true, b.enumVals
		}
	}
	if b.re != nil {
		if n.re != nil {
			return nil, &CompileError{Path: path, Msg: "two patterns/formats in one allOf are not supported"}
		}
		n.re, n.format = b.re, b.format
	}
	n.minLen = max(a.minLen, b.minLen)
	n.maxLen = minBound(a.maxLen, b.maxLen)
	if b.hasMin && (!n.hasMin || b.min > n.min || b.min == n.min && b.exMin) {
		n.hasMin, n.min, n.exMin = true, b.min, b.exMin
	}
	if b.hasMax && (!n.hasMax || b.max < n.max || b.max == n.max && b.exMax) {
		n.hasMax, n.max, n.exMax = true, b.max, b.exMax
	}
	n.minItems = max(a.minItems, b.minItems)
	n.maxItems = minBound(a.maxItems, b.maxItems)
	n.minProps = max(a.minProps, b.minProps)
	n.maxProps = minBound(a.maxProps, b.maxProps)

	// arrays: position by position
	n.prefix = nil
	for i := 0; i < max(len(a.prefix), len(b.prefix)); i++ {
		m, err := c.merge(itemAt(a, i), itemAt(b, i), path, depth+1)
		if err != nil {
			return nil, err
		}
		n.prefix = append(n.prefix, m)
	}
	if n.items, err = c.mergeOpt(a.items, b.items, path, depth); err != nil {
		return nil, err
	}
	// objects: a name's value must satisfy what each side says of it
	n.props = nil
	add := func(name string) error {
		if propIndex(n.props, name) >= 0 {
			return nil
		}
		va, vb := propAt(a, name), propAt(b, name)
		req := isRequired(a, name) || isRequired(b, name)
		var m *node
		if va == nil || vb == nil {
			m = nothing
		} else if m, err = c.merge(va, vb, path, depth+1); err != nil {
			return err
		}
		n.props = append(n.props, prop{name: name, n: m, required: req})
		return nil
	}
	for _, p := range a.props {
		if err := add(p.name); err != nil {
			return nil, err
		}
	}
	for _, p := range b.props {
		if err := add(p.name); err != nil {
			return nil, err
		}
	}
	if n.addl, err = c.mergeOpt(a.addl, b.addl, path, depth); err != nil {
		return nil, err
	}
	if len(n.props) > 4096 {
		return nil, &CompileError{Path: path, Msg: fmt.Sprintf("%d properties after allOf, over 4096", len(n.props))}
	}
	return n, nil
}

func (c *compiler) mergeOpt(a, b *node, path string, depth int) (*node, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	return c.merge(a, b, path, depth+1)
}

func isAnything(n *node) bool {
	return n == anythingShared || (n.types == tAll && n.anyOf == nil && !n.enum && n.re == nil &&
		n.minLen == 0 && n.maxLen < 0 && !n.hasMin && !n.hasMax && n.prefix == nil && n.items == anythingShared &&
		n.minItems == 0 && n.maxItems < 0 && n.props == nil && n.addl == anythingShared && n.minProps == 0 && n.maxProps < 0)
}

func minBound(a, b int) int {
	if a < 0 {
		return b
	}
	if b < 0 {
		return a
	}
	return min(a, b)
}

// itemAt is the schema of array item i.
func itemAt(n *node, i int) *node {
	if i < len(n.prefix) {
		return n.prefix[i]
	}
	if n.items == nil {
		return nothing
	}
	return n.items
}

// propAt is the schema a property's value follows (nil: not allowed).
func propAt(n *node, name string) *node {
	if i := propIndex(n.props, name); i >= 0 {
		return n.props[i].n
	}
	return n.addl
}

func isRequired(n *node, name string) bool {
	i := propIndex(n.props, name)
	return i >= 0 && n.props[i].required
}

// intersectValues keeps the values of a that b holds too.
func intersectValues(a, b []any) []any {
	var out []any
	for _, v := range a {
		enc := string(compactJSON(nil, v))
		for _, w := range b {
			if string(compactJSON(nil, w)) == enc {
				out = append(out, v)
				break
			}
		}
	}
	return out
}
