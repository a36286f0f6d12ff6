package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits checked before the work they bound.
const (
	MaxSchemaBytes = 256 << 10 // a schema's JSON text
	MaxDepth       = 64        // nesting of the schema's JSON
	MaxEnum        = 4096      // values in one enum
	MaxNodes       = 50000     // compiled subschemas, allOf merges included
	MaxCompileTime = 2 * time.Second
)

// CompileError is a schema the grammar cannot enforce (invalid, over a
// limit, or using a feature that is not supported); the API answers 400.
type CompileError struct {
	Path string // JSON pointer of the subschema
	Msg  string
}

func (e *CompileError) Error() string {
	if e.Path == "" {
		return "json schema: " + e.Msg
	}
	return "json schema at " + e.Path + ": " + e.Msg
}

// unsupported are JSON Schema's assertion keywords this grammar does not
// enforce: a schema using one is refused, never silently loosened. Other
// keywords are annotations (or not JSON Schema's) and assert nothing.
var unsupported = map[string]bool{
	"not": true, "if": true, "then": true, "else": true, "patternProperties": true, "uniqueItems": true,
	"dependencies": true, "dependentRequired": true, "dependentSchemas": true, "contains": true,
	"minContains": true, "maxContains": true, "propertyNames": true, "unevaluatedProperties": true,
	"unevaluatedItems": true, "$dynamicRef": true, "$recursiveRef": true, "$dynamicAnchor": true,
	"$recursiveAnchor": true,
}

type compiler struct {
	root     any
	refAlone bool // drafts 3 to 7: a $ref's sibling keywords are ignored
	refs     map[string]*node
	bare     map[string]bool // $refs followed since the last structural step
	nodes    []*node
	deadline time.Time
}

// compileSchema turns schema JSON into a node graph.
func compileSchema(data []byte) (*node, []*node, error) {
	if len(data) > MaxSchemaBytes {
		return nil, nil, &CompileError{Msg: fmt.Sprintf("schema is %d bytes, over the %d-byte limit", len(data), MaxSchemaBytes)}
	}
	v, err := parseJSON(data, MaxDepth)
	if err != nil {
		return nil, nil, &CompileError{Msg: "not valid JSON: " + err.Error()}
	}
	c := &compiler{root: v, refs: map[string]*node{}, bare: map[string]bool{}, deadline: time.Now().Add(MaxCompileTime)}
	c.refAlone = legacyDraft(v)
	n, err := c.compile(v, "#")
	if err != nil {
		return nil, nil, err
	}
	return n, c.nodes, nil
}

func (c *compiler) newNode(path string) (*node, error) {
	if len(c.nodes) >= MaxNodes {
		return nil, &CompileError{Path: path, Msg: fmt.Sprintf("schema needs over %d subschemas", MaxNodes)}
	}
	if len(c.nodes)%256 == 0 && time.Now().After(c.deadline) {
		return nil, &CompileError{Path: path, Msg: "schema takes over " + MaxCompileTime.String() + " to compile"}
	}
	n := newNode()
	c.nodes = append(c.nodes, n)
	return n, nil
}

func (c *compiler) compile(v any, path string) (*node, error) {
	switch s := v.(type) {
	case bool:
		n, err := c.newNode(path)
		if err != nil {
			return nil, err
		}
		if s {
			n.items, n.addl = anythingShared, anythingShared
		} else {
			n.types = 0
		}
		n.done = true
		return n, nil
	case *object:
		return c.compileObject(s, path)
	}
	return nil, &CompileError{Path: path, Msg: "a schema must be an object or a boolean"}
}

// structural compiles a subschema one value deeper (the $ref cycle guard resets).
func (c *compiler) structural(v any, path string) (*node, error) {
	saved := c.bare
	c.bare = map[string]bool{}
	n, err := c.compile(v, path)
	c.bare = saved
	return n, err
}

// legacyDraft reports whether the root's $schema names draft 3, 4, 6 or
// 7, where $ref stands alone: the keywords beside it are ignored.
func legacyDraft(root any) bool {
	o, ok := root.(*object)
	if !ok {
		return false
	}
	v, _ := o.get("$schema")
	id, _ := v.(string)
	for _, d := range []string{"draft-03/", "draft-04/", "draft-06/", "draft-07/"} {
		if strings.Contains(id, "json-schema.org/"+d) {
			return true
		}
	}
	return false
}

func (c *compiler) compileObject(s *object, path string) (*node, error) {
	if ref, ok := s.get("$ref"); ok && c.refAlone {
		return c.ref(ref, path)
	}
	n, err := c.newNode(path)
	if err != nil {
		return nil, err
	}
	n.items, n.addl = anythingShared, anythingShared
	for i, k := range s.keys {
		if k == "required" {
			continue
		}
		if err := c.keyword(n, s, k, s.vals[i], path); err != nil {
			return nil, err
		}
	}
	if req, ok := s.get("required"); ok {
		if err := c.required(n, req, path); err != nil {
			return nil, err
		}
	}
	n.done = true
	// $ref, allOf, anyOf and oneOf combine with the keywords beside them.
	var parts []*node
	if ref, ok := s.get("$ref"); ok {
		r, err := c.ref(ref, path)
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	if all, ok := s.get("allOf"); ok {
		subs, err := c.list(all, path+"/allOf")
		if err != nil {
			return nil, err
		}
		parts = append(parts, subs...)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, ok := s.get(kw)
		if !ok {
			continue
		}
		subs, err := c.list(alts, path+"/"+kw)
		if err != nil {
			return nil, err
		}
		if kw == "oneOf" && len(subs) > 1 && !disjoint(subs) {
			return nil, &CompileError{Path: path, Msg: "oneOf whose branches may overlap is not supported"}
		}
		a, err := c.newNode(path)
		if err != nil {
			return nil, err
		}
		a.anyOf, a.done = subs, true
		parts = append(parts, a)
	}
	for _, p := range parts {
		if n, err = c.merge(n, p, path, 0); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (c *compiler) list(v any, path string) ([]*node, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil, &CompileError{Path: path, Msg: "must be a non-empty array of schemas"}
	}
	out := make([]*node, len(a))
	for i, e := range a {
		n, err := c.compile(e, path+"/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// ref resolves a local JSON pointer ("#", "#/$defs/x").
func (c *compiler) ref(v any, path string) (*node, error) {
	r, ok := v.(string)
	if !ok || !strings.HasPrefix(r, "#") {
		return nil, &CompileError{Path: path, Msg: fmt.Sprintf("$ref %v: only local references (#/…) are supported", v)}
	}
	if c.bare[r] {
		return nil, &CompileError{Path: path, Msg: fmt.Sprintf("$ref %q refers to itself with no value in between (a recursion with no base case)", r)}
	}
	if n, ok := c.refs[r]; ok {
		return n, nil
	}
	target, err := c.pointer(r)
	if err != nil {
		return nil, &CompileError{Path: path, Msg: err.Error()}
	}
	// A placeholder lets recursive references point at the node before it
	// is compiled; it is filled in place after.
	ph := newNode()
	c.refs[r] = ph
	c.bare[r] = true
	n, err := c.compile(target, r)
	delete(c.bare, r)
	if err != nil {
		return nil, err
	}
	*ph = *n
	ph.done = true
	c.nodes = append(c.nodes, ph)
	return ph, nil
}

func (c *compiler) pointer(r string) (any, error) {
	frag, err := url.PathUnescape(r[1:])
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %v", r, err)
	}
	v := c.root
	if frag == "" {
		return v, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("$ref %q: anchors are not supported", r)
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case *object:
			nv, ok := x.get(tok)
			if !ok {
				return nil, fmt.Errorf("$ref %q: %q not found", r, tok)
			}
			v = nv
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("$ref %q: no item %q", r, tok)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("$ref %q: cannot descend into %q", r, tok)
		}
	}
	return v, nil
}

func typeOf(name string) (typeSet, bool) {
	switch name {
	case "null":
		return tNull, true
	case "boolean":
		return tBool, true
	case "integer":
		return tInt, true
	case "number":
		return tInt | tFrac, true
	case "string":
		return tStr, true
	case "array":
		return tArr, true
	case "object":
		return tObj, true
	}
	return 0, false
}

func number(v any) (float64, bool) {
	x, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := x.Float64()
	return f, err == nil && !math.IsInf(f, 0)
}

func count(v any) (int, bool) {
	f, ok := number(v)
	if !ok || f < 0 || f != math.Trunc(f) {
		return 0, false
	}
	return int(min(f, 1<<30)), true
}

// disjoint reports whether no value can match two of the schemas: for
// each pair, their types do not overlap, or both are objects only told
// apart by a discriminator (below).
func disjoint(subs []*node) bool {
	for i, a := range subs {
		if a.anyOf != nil || a.enum {
			return false
		}
		for _, b := range subs[:i] {
			switch a.types & b.types {
			case 0:
			case tObj:
				if !discriminated(a, b) {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// discriminated reports whether a and b both require a property whose
// values are strings from two enums (or consts) with none in common.
func discriminated(a, b *node) bool {
	for _, pa := range a.props {
		i := propIndex(b.props, pa.name)
		if i < 0 || !pa.required || !b.props[i].required {
			continue
		}
		va, okA := stringEnum(pa.n)
		vb, okB := stringEnum(b.props[i].n)
		if !okA || !okB {
			continue
		}
		common := false
		for s := range va {
			if vb[s] {
				common = true
			}
		}
		if !common {
			return true
		}
	}
	return false
}

// stringEnum is the values of an enum or const of strings only.
func stringEnum(n *node) (map[string]bool, bool) {
	if n == nil || !n.done || !n.enum || n.anyOf != nil {
		return nil, false
	}
	set := map[string]bool{}
	for _, v := range n.enumVals {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		set[s] = true
	}
	return set, true
}
