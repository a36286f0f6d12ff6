package grammar

import (
	"slices"
	"unicode/utf8"
)

// Vocab is a tokenizer's vocabulary as a byte trie: each token is the bytes
// it decodes to; a special token is 0xFF and its id in three bytes (0xFF
// never occurs in UTF-8, and byte-fallback tokens that no valid UTF-8 can
// use are left out, so a special can only be spelled by itself). Tokens
// that decode to nothing are never allowed. A Vocab is read-only: share it.
type Vocab struct {
	size  int
	first []int32 // node → its edges [first[n], first[n+1])
	label []byte  // edge byte
	to    []int32 // edge target node
	tokAt []int32 // node → its tokens [tokAt[n], tokAt[n+1]) in toks
	toks  []int32
	bytes [][]byte // id → its bytes; nil: never allowed
}

// TokenSource is what a Vocab is built from (engine/tokenizer's Tokenizer).
type TokenSource interface {
	VocabSize() int
	TokenBytes(id int32) ([]byte, bool)
	IsSpecial(id int32) bool
}

// specialBytes is the byte spelling of special token id.
func specialBytes(id int32) []byte {
	return []byte{0xFF, byte(id >> 16), byte(id >> 8), byte(id)}
}

// NewVocab builds the trie over every token of src.
func NewVocab(src TokenSource) *Vocab {
	n := src.VocabSize()
	type entry struct {
		b  []byte
		id int32
	}
	entries := make([]entry, 0, n)
	for id := int32(0); int(id) < n; id++ {
		b, byteTok := src.TokenBytes(id)
		switch {
		case src.IsSpecial(id):
			b = specialBytes(id)
		case len(b) == 0:
			continue
		case byteTok && (b[0] >= 0xF5 || b[0] == 0xC0 || b[0] == 0xC1):
			continue
		case !byteTok && !utf8.Valid(b):
			continue
		}
		entries = append(entries, entry{b, id})
	}
	slices.SortFunc(entries, func(x, y entry) int { return slices.Compare(x.b, y.b) })
	// Sorted order is a depth-first order of the trie: build it in one pass.
	v := &Vocab{size: n, bytes: make([][]byte, n)}
	for _, e := range entries {
		v.bytes[e.id] = e.b
	}
	type open struct {
		node  int32
		depth int
	}
	v.first = []int32{0}
	var path []int32 // node at each depth along the current token
	nodes := 1
	children := [][]int32{nil} // node → child nodes, for flattening
	labels := []byte{0}
	tokens := [][]int32{nil}
	path = append(path, 0)
	var prev []byte
	for _, e := range entries {
		common := 0
		for common < len(prev) && common < len(e.b) && prev[common] == e.b[common] {
			common++
		}
		path = path[:common+1]
		for d := common; d < len(e.b); d++ {
			parent := path[d]
			children[parent] = append(children[parent], int32(nodes))
			children = append(children, nil)
			labels = append(labels, e.b[d])
			tokens = append(tokens, nil)
			path = append(path, int32(nodes))
			nodes++
		}
		last := path[len(e.b)]
		tokens[last] = append(tokens[last], e.id)
		prev = e.b
	}
	v.first = make([]int32, nodes+1)
	v.tokAt = make([]int32, nodes+1)
	for i := 0; i < nodes; i++ {
		v.first[i+1] = v.first[i] + int32(len(children[i]))
		for _, ch := range children[i] {
			v.label = append(v.label, labels[ch])
			v.to = append(v.to, ch)
		}
		v.tokAt[i+1] = v.tokAt[i] + int32(len(tokens[i]))
		v.toks = append(v.toks, tokens[i]...)
	}
	return v
}

// Size is the number of token ids the masks cover.
func (v *Vocab) Size() int { return v.size }
