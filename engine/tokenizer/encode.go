package tokenizer

import (
	"sync"
	"unicode/utf8"
)

// Encode turns text into token ids. Added tokens written in the text (for
// example "<|turn>") become their ids, as in Hugging Face with
// add_special_tokens=False; with addSpecial the post-processor's tokens
// (Gemma: <bos>) are added around the text. Invalid UTF-8 is encoded byte
// by byte through the byte-fallback tokens.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	out := make([]int32, 0, len(text)/3+len(t.prefix)+len(t.suffix)+1)
	if addSpecial {
		out = append(out, t.prefix...)
	}
	out = t.encode(text, out, t.rawAdded, t.normAdded)
	if addSpecial {
		out = append(out, t.suffix...)
	}
	return out
}

// EncodePlain encodes text in which special tokens are not recognised:
// "<|image|>" typed by a user becomes ordinary text, never the placeholder
// id (HF's split_special_tokens=True). Non-special added tokens ("\n\n",
// "<b>") still match, so ordinary text encodes as with Encode. Use it for
// user content spliced between template tokens.
func (t *Tokenizer) EncodePlain(text string) []int32 {
	return t.encode(text, make([]int32, 0, len(text)/3+1), t.rawPlain, t.normPlain)
}

func (t *Tokenizer) encode(text string, out []int32, rawAdded, normAdded *trie) []int32 {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.segs = rawAdded.split(text, sc.segs[:0])
	for _, seg := range sc.segs {
		if seg.id >= 0 {
			out = append(out, seg.id)
			continue
		}
		norm := t.normalize(seg.text)
		if normAdded == nil {
			out = t.encodeWord(norm, out, sc)
			continue
		}
		for _, sub := range normAdded.split(norm, nil) {
			if sub.id >= 0 {
				out = append(out, sub.id)
			} else {
				out = t.encodeWord(sub.text, out, sc)
			}
		}
	}
	return out
}

// scratch holds the per-call buffers of Encode.
type scratch struct {
	segs []segment
	syms []symbol
	heap pairHeap
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// symbol is one node of the doubly linked list BPE merges over.
type symbol struct {
	id         int32 // -1 once merged into its left neighbour
	prev, next int32
}

// encodeWord runs byte-fallback BPE over one normalized word and appends
// the ids to out.
func (t *Tokenizer) encodeWord(word string, out []int32, sc *scratch) []int32 {
	if word == "" {
		return out
	}
	if t.ignoreMerges {
		if id := t.lookup(word); id >= 0 {
			return append(out, id)
		}
	}
	syms := sc.syms[:0]
	push := func(id int32) {
		n := int32(len(syms))
		syms = append(syms, symbol{id: id, prev: n - 1, next: n + 1})
	}
	for i := 0; i < len(word); {
		_, w := utf8.DecodeRuneInString(word[i:])
		if id := t.lookup(word[i : i+w]); id >= 0 {
			push(id)
		} else if t.byteFallback && t.hasByteTokens(word[i:i+w]) {
			for j := i; j < i+w; j++ {
				push(t.byteID[word[j]])
			}
		} else if !t.fuseUnk || len(syms) == 0 || syms[len(syms)-1].id != t.unk {
			push(t.unk)
		}
		i += w
	}
	syms[len(syms)-1].next = -1
	sc.syms = syms
	if len(syms) > 1 {
		t.mergeAll(syms, &sc.heap)
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

func (t *Tokenizer) hasByteTokens(s string) bool {
	for i := 0; i < len(s); i++ {
		if t.byteID[s[i]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll applies merges lowest (rank, position) first until none applies,
// like HF's Word::merge_all. Each step is O(log n).
func (t *Tokenizer) mergeAll(syms []symbol, h *pairHeap) {
	h.items = h.items[:0]
	for i := 0; i+1 < len(syms); i++ {
		if rank, id, ok := t.mergeOf(syms[i].id, syms[i+1].id); ok {
			h.items = append(h.items, pair{rank: rank, pos: int32(i), left: syms[i].id, right: syms[i+1].id, id: id})
		}
	}
	h.init()
	for len(h.items) > 0 {
		p := h.pop()
		s := &syms[p.pos]
		if s.id != p.left || s.next < 0 || syms[s.next].id != p.right {
			continue // stale: one side has merged since this pair was queued
		}
		right := s.next
		s.id = p.id
		s.next = syms[right].next
		syms[right].id = -1
		if s.next >= 0 {
			syms[s.next].prev = p.pos
			if rank, id, ok := t.mergeOf(s.id, syms[s.next].id); ok {
				h.push(pair{rank: rank, pos: p.pos, left: s.id, right: syms[s.next].id, id: id})
			}
		}
		if s.prev >= 0 {
			l := &syms[s.prev]
			if rank, id, ok := t.mergeOf(l.id, s.id); ok {
				h.push(pair{rank: rank, pos: s.prev, left: l.id, right: s.id, id: id})
			}
		}
	}
}

// pair is a queued candidate merge of syms[pos] with its right neighbour.
type pair struct {
	rank, pos, left, right, id int32
}

// pairHeap is a binary min-heap ordered by (rank, pos).
type pairHeap struct{ items []pair }

func (p pair) less(q pair) bool {
	return p.rank < q.rank || (p.rank == q.rank && p.pos < q.pos)
}

func (h *pairHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	h.items = append(h.items, p)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.items[i].less(h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top
}

func (h *pairHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.items[r].less(h.items[l]) {
			m = r
		}
		if !h.items[m].less(h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
