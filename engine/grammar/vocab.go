package grammar

import (
	"bytes"
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
	all   trie
	bytes [][]byte // id → its bytes; nil: never allowed
	// Inside a string most tokens are plain text; their fate depends only on
	// how many characters the string still has room for (see slicer).
	json, tool slicer
}

type trie struct {
	first []int32 // node → its edges [first[n], first[n+1])
	label []byte  // edge byte
	to    []int32 // edge target node
	tokAt []int32 // node → its tokens [tokAt[n], tokAt[n+1]) in toks
	toks  []int32
}

// slicer splits the vocabulary for a string with no regex: plain tokens
// (whole characters that cannot end the string or start an escape) are
// allowed exactly when their characters fit; only the rest is walked.
type slicer struct {
	upTo  [][]uint64 // k → plain tokens of at most k characters
	rest  trie
	plain trie // the plain tokens, for regexes (plainFor)
	below subtrees
}

// subtrees summarises each node of a trie's subtree: the ASCII bytes and
// the UTF-8 lead bytes (bit b-0xC0) on its edges, and where its tokens end
// in toks (a subtree's tokens are contiguous: nodes are numbered depth
// first).
type subtrees struct {
	ascii   [][2]uint64
	leads   []uint64
	toksEnd []int32
}

func summarize(t *trie) subtrees {
	nodes := len(t.first) - 1
	s := subtrees{ascii: make([][2]uint64, nodes), leads: make([]uint64, nodes), toksEnd: make([]int32, nodes)}
	for n := nodes - 1; n >= 0; n-- {
		s.toksEnd[n] = t.tokAt[n+1]
		for e := t.first[n]; e < t.first[n+1]; e++ {
			ch, b := t.to[e], t.label[e]
			if b < 0x80 {
				s.ascii[n][b>>6] |= 1 << (b & 63)
			} else if b >= 0xC0 {
				s.leads[n] |= 1 << (b - 0xC0)
			}
			s.ascii[n][0] |= s.ascii[ch][0]
			s.ascii[n][1] |= s.ascii[ch][1]
			s.leads[n] |= s.leads[ch]
			s.toksEnd[n] = max(s.toksEnd[n], s.toksEnd[ch])
		}
	}
	return s
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
	v := &Vocab{size: n, bytes: make([][]byte, n)}
	var all, restJSON, restTool, plainJSON, plainTool []entry
	var runesJSON, runesTool []int
	for _, e := range entries {
		v.bytes[e.id] = e.b
		all = append(all, e)
		if k := plainRunes(e.b, false); k > 0 {
			runesJSON = append(runesJSON, int(e.id), k)
			plainJSON = append(plainJSON, e)
		} else {
			restJSON = append(restJSON, e)
		}
		if k := plainRunes(e.b, true); k > 0 {
			runesTool = append(runesTool, int(e.id), k)
			plainTool = append(plainTool, e)
		} else {
			restTool = append(restTool, e)
		}
	}
	build := func(es []entry) trie {
		bs := make([][]byte, len(es))
		ids := make([]int32, len(es))
		for i, e := range es {
			bs[i], ids[i] = e.b, e.id
		}
		return buildTrie(bs, ids)
	}
	v.all = build(all)
	v.json = slicer{upTo: cumulative(runesJSON, n), rest: build(restJSON), plain: build(plainJSON)}
	v.tool = slicer{upTo: cumulative(runesTool, n), rest: build(restTool), plain: build(plainTool)}
	v.json.below, v.tool.below = summarize(&v.json.plain), summarize(&v.tool.plain)
	return v
}

// plainRunes is the number of characters of a plain string token, or 0.
// In JSON a plain token has no '"', '\\' or control character; in Gemma-4
// calls no special token, no "<|" and no leading '|' (a '<' may end the
// token before).
func plainRunes(b []byte, tool bool) int {
	if len(b) == 0 || b[0] == 0xFF || !utf8.Valid(b) {
		return 0
	}
	if tool {
		if b[0] == '|' || bytes.Contains(b, []byte("<|")) {
			return 0
		}
		return utf8.RuneCount(b)
	}
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return 0
		}
	}
	return utf8.RuneCount(b)
}

// cumulative turns (id, characters) pairs into bitsets of the tokens with
// at most k characters, k = 0 .. the longest.
func cumulative(pairs []int, n int) [][]uint64 {
	longest := 0
	for i := 1; i < len(pairs); i += 2 {
		longest = max(longest, pairs[i])
	}
	words := (n + 63) / 64
	out := make([][]uint64, longest+1)
	out[0] = make([]uint64, words)
	for k := 1; k <= longest; k++ {
		out[k] = slices.Clone(out[k-1])
		for i := 0; i < len(pairs); i += 2 {
			if pairs[i+1] == k {
				out[k][pairs[i]>>6] |= 1 << (pairs[i] & 63)
			}
		}
	}
	return out
}

// buildTrie builds the trie of sorted byte strings: sorted order is a
// depth-first order, so one pass suffices.
func buildTrie(bs [][]byte, ids []int32) trie {
	children := [][]int32{nil}
	labels := []byte{0}
	tokens := [][]int32{nil}
	path := []int32{0} // node at each depth along the current string
	var prev []byte
	for i, b := range bs {
		common := 0
		for common < len(prev) && common < len(b) && prev[common] == b[common] {
			common++
		}
		path = path[:common+1]
		for d := common; d < len(b); d++ {
			node := int32(len(labels))
			children[path[d]] = append(children[path[d]], node)
			children = append(children, nil)
			labels = append(labels, b[d])
			tokens = append(tokens, nil)
			path = append(path, node)
		}
		last := path[len(b)]
		tokens[last] = append(tokens[last], ids[i])
		prev = b
	}
	nodes := len(labels)
	t := trie{first: make([]int32, nodes+1), tokAt: make([]int32, nodes+1)}
	for i := 0; i < nodes; i++ {
		t.first[i+1] = t.first[i] + int32(len(children[i]))
		for _, ch := range children[i] {
			t.label = append(t.label, labels[ch])
			t.to = append(t.to, ch)
		}
		t.tokAt[i+1] = t.tokAt[i] + int32(len(tokens[i]))
		t.toks = append(t.toks, tokens[i]...)
	}
	return t
}

// Size is the number of token ids the masks cover.
func (v *Vocab) Size() int { return v.size }
