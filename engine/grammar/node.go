package grammar

import "perch/engine/grammar/regex"

// typeSet is the JSON types a value may take.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tInt  // integers
	tFrac // numbers with a fraction or exponent
	tStr
	tArr
	tObj
	tAll = tNull | tBool | tInt | tFrac | tStr | tArr | tObj
)

// node is a compiled schema: what one JSON value may be.
type node struct {
	types typeSet
	anyOf []*node // when set, the value matches one of these (types unused)

	// enum/const: non-string values as compact JSON in lits; string values
	// through re (strings then need no other check).
	enum     bool
	enumVals []any
	lits     *litTrie
	enumRe   *regex.DFA
	filtered bool // enumVals checked against the other keywords

	minLen, maxLen int // in code points; maxLen -1: no bound
	re             *regex.DFA
	format         string // for messages

	hasMin, hasMax bool
	exMin, exMax   bool
	min, max       float64

	prefix             []*node
	items              *node // after prefix; nil: no more items
	minItems, maxItems int   // maxItems -1: no bound

	props              []prop
	names              *litTrie // every property name, to keep additional keys apart
	addl               *node    // nil: no other properties
	minProps, maxProps int
	any                *anyOrder // JSON objects of at most 64 properties: keys in any order

	done       bool // compiled (a $ref target still in progress is not)
	productive bool // some finite value matches
}

type prop struct {
	name     string
	n        *node
	required bool
	key      []byte // `"name":` (JSON)
	bareKey  []byte // `name:` (Gemma-4 call syntax)
}

func newNode() *node { return &node{types: tAll, maxLen: -1, maxItems: -1, maxProps: -1} }

// anything matches every JSON value.
func anything() *node {
	n := newNode()
	n.items = n
	n.addl = n
	n.done = true
	return n
}

// litTrie is a byte trie of literals (compact JSON values, or names).
type litTrie struct {
	next []map[byte]int32
	end  []bool
}

func newLitTrie() *litTrie { return &litTrie{next: []map[byte]int32{nil}, end: []bool{false}} }

func (t *litTrie) add(s []byte) {
	at := int32(0)
	for _, c := range s {
		nx, ok := t.next[at][c]
		if !ok {
			if t.next[at] == nil {
				t.next[at] = map[byte]int32{}
			}
			nx = int32(len(t.end))
			t.next[at][c] = nx
			t.next = append(t.next, nil)
			t.end = append(t.end, false)
		}
		at = nx
	}
	t.end[at] = true
}

// step is the node after c from at, or -1.
func (t *litTrie) step(at int32, c byte) int32 {
	if at < 0 {
		return -1
	}
	if nx, ok := t.next[at][c]; ok {
		return nx
	}
	return -1
}

// anythingShared is the "true" schema every node points at by default.
var anythingShared = func() *node {
	n := anything()
	n.productive = true
	return n
}()
