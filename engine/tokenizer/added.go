package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	content                   string
	id                        int32
	lstrip, rstrip, singleWrd bool
	normalized                bool
}

// trie matches added tokens leftmost-longest, byte by byte.
type trie struct {
	first [256]bool        // bytes that can start a match
	next  map[uint64]int32 // node<<8 | byte → child node
	term  map[int32]int32  // node → index into tokens
	tok   []addedToken
}

func newTrie(tokens []addedToken) *trie {
	tr := &trie{next: map[uint64]int32{}, term: map[int32]int32{}}
	nodes := int32(1) // 0 is the root
	for _, at := range tokens {
		if at.content == "" {
			continue
		}
		tr.tok = append(tr.tok, at)
		node := int32(0)
		for j := 0; j < len(at.content); j++ {
			key := uint64(node)<<8 | uint64(at.content[j])
			child, ok := tr.next[key]
			if !ok {
				child = nodes
				nodes++
				tr.next[key] = child
			}
			node = child
		}
		tr.first[at.content[0]] = true
		tr.term[node] = int32(len(tr.tok) - 1) // a later duplicate wins, as in HF
	}
	if len(tr.tok) == 0 {
		return nil
	}
	return tr
}

// longest returns the length and token of the longest match starting at
// s[i], or 0.
func (tr *trie) longest(s string, i int) (int, *addedToken) {
	if !tr.first[s[i]] {
		return 0, nil
	}
	node, best, bestTok := int32(0), 0, int32(-1)
	for j := i; j < len(s); j++ {
		child, ok := tr.next[uint64(node)<<8|uint64(s[j])]
		if !ok {
			break
		}
		node = child
		if k, ok := tr.term[node]; ok {
			best, bestTok = j+1-i, k
		}
	}
	if bestTok < 0 {
		return 0, nil
	}
	return best, &tr.tok[bestTok]
}

// segment is either plain text (id < 0) or one added token.
type segment struct {
	text string
	id   int32
}

// split cuts s at added-token matches, leftmost-longest, honouring the
// lstrip/rstrip/single_word flags, and appends the pieces to out.
func (tr *trie) split(s string, out []segment) []segment {
	if tr == nil {
		return append(out, segment{s, -1})
	}
	start := 0
	for i := 0; i < len(s); {
		n, at := tr.longest(s, i)
		if n == 0 || (at.singleWrd && !wordBoundary(s, i, i+n)) {
			i++
			continue
		}
		textEnd, next := i, i+n
		if at.lstrip {
			for textEnd > start {
				r, w := utf8.DecodeLastRuneInString(s[start:textEnd])
				if !unicode.IsSpace(r) {
					break
				}
				textEnd -= w
			}
		}
		if at.rstrip {
			for next < len(s) {
				r, w := utf8.DecodeRuneInString(s[next:])
				if !unicode.IsSpace(r) {
					break
				}
				next += w
			}
		}
		if textEnd > start {
			out = append(out, segment{s[start:textEnd], -1})
		}
		out = append(out, segment{at.content, at.id})
		start, i = next, next
	}
	if start < len(s) {
		out = append(out, segment{s[start:], -1})
	}
	return out
}

// wordBoundary reports whether s[i:j] is not glued to word characters.
func wordBoundary(s string, i, j int) bool {
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWord(r) {
			return false
		}
	}
	if j < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[j:]); isWord(r) {
			return false
		}
	}
	return true
}

// buildTries builds the added-token matchers from t.added and the current
// special flags: raw/normalized for Encode, and the same without special
// tokens for EncodePlain. Called once the normalizer and the config are in.
func (t *Tokenizer) buildTries() {
	var raw, normed, rawPlain, normPlain []addedToken
	for _, a := range t.added {
		plain := !t.IsSpecial(a.id)
		if a.normalized {
			a.content = t.normalize(a.content) // HF matches these on normalized text
			normed = append(normed, a)
			if plain {
				normPlain = append(normPlain, a)
			}
			continue
		}
		raw = append(raw, a)
		if plain {
			rawPlain = append(rawPlain, a)
		}
	}
	t.rawAdded, t.normAdded = newTrie(raw), newTrie(normed)
	t.rawPlain, t.normPlain = newTrie(rawPlain), newTrie(normPlain)
}
