package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// builder turns the model section of a tokenizer.json into the Tokenizer's
// tables in one pass and a few flat allocations: vocabulary texts are read
// in place from the file bytes, merges are resolved to ids as they stream by.
type builder struct {
	name   string
	data   []byte
	loc    []uint64 // per vocab id: (start+1)<<32 | length in data (or esc); 0 = no entry
	esc    []byte   // vocab texts that had JSON escapes, unescaped
	vocabN int      // 1 + the largest vocab id
	t      *Tokenizer
	pairs  [][][3]int32 // merges as (left, right, result), in rank order, in chunks (no regrowth garbage)
	opt    struct {     // the BPE model's options
		typ                           string
		unk                           string
		hasUnk, byteFallback, fuseUnk bool
		ignoreMerges                  bool
	}
	sawModel bool
}

// locEsc marks a loc that points into esc rather than data.
const locEsc = 1 << 63

type addedJSON struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// model reads the "model" object at the scanner's position.
func (b *builder) model(s *scanner) error {
	b.sawModel, b.opt.typ = true, "BPE"
	mergesAt := -1
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			var v []byte
			v, err = s.str()
			b.opt.typ = string(v)
		case "vocab":
			if b.loc != nil {
				return s.errorf("model.vocab given twice")
			}
			if err = b.vocab(s); err == nil {
				err = b.vocabTables()
			}
		case "merges":
			if b.t == nil { // merges before vocab: come back to them
				s.skipSpace()
				mergesAt = s.pos
				return s.skip(0)
			}
			err = b.merges(s)
		case "unk_token":
			b.opt.unk, b.opt.hasUnk, err = s.strOrNull()
		case "byte_fallback":
			b.opt.byteFallback, err = s.boolOrNull()
		case "fuse_unk":
			b.opt.fuseUnk, err = s.boolOrNull()
		case "ignore_merges":
			b.opt.ignoreMerges, err = s.boolOrNull()
		case "dropout":
			if s.peek() == 'n' {
				err = s.skip(0)
			} else if txt, e := s.number(); e != nil {
				err = e
			} else if string(txt) != "0" && string(txt) != "0.0" {
				err = s.errorf("model.dropout %s is not supported (encoding must be deterministic)", txt)
			}
		case "continuing_subword_prefix", "end_of_word_suffix":
			var v string
			if v, _, err = s.strOrNull(); err == nil && v != "" {
				err = s.errorf("model.%s %q is not supported", key, v)
			}
		default:
			err = s.skip(0)
		}
		return err
	})
	if err != nil {
		return err
	}
	if b.opt.typ != "BPE" {
		return fmt.Errorf("%s: model type %q is not supported (only BPE, as Gemma uses)", b.name, b.opt.typ)
	}
	if b.t == nil {
		return fmt.Errorf("%s: model has no vocab", b.name)
	}
	if mergesAt >= 0 {
		return b.merges(&scanner{file: b.name, data: b.data, pos: mergesAt})
	}
	return nil
}

func (b *builder) vocab(s *scanner) error {
	b.loc = make([]uint64, 0, 1024)
	return s.object(func(key []byte) error {
		loc := uint64(s.strAt+1)<<32 | uint64(len(key)) // the key's bytes in data
		if s.strEscaped {
			loc = locEsc | uint64(len(b.esc)+1)<<32 | uint64(len(key))
			b.esc = append(b.esc, key...)
		}
		id, err := s.integer(maxID - 1)
		if err != nil {
			return fmt.Errorf("%w (model.vocab %.40q)", err, key)
		}
		if int(id) >= len(b.loc) {
			b.loc = append(b.loc, make([]uint64, int(id)+1-len(b.loc))...)
		}
		if b.loc[id] != 0 {
			return s.errorf("model.vocab gives id %d to more than one token (%.40q)", id, key)
		}
		b.loc[id] = loc
		b.vocabN = max(b.vocabN, int(id)+1)
		return nil
	})
}

// text returns the vocab text of a loc.
func (b *builder) text(loc uint64) []byte {
	if loc == 0 {
		return nil
	}
	start, n := (loc&^locEsc)>>32-1, loc&0xffffffff
	if loc&locEsc != 0 {
		return b.esc[start : start+n]
	}
	return b.data[start : start+n]
}

// vocabTables builds id → text and text → id for the vocabulary alone; the
// merges are resolved against it (HF's BPE model knows no added tokens).
func (b *builder) vocabTables() error {
	t, err := newTables(b.name, b.vocabN, func(id int) (string, []byte, bool) {
		return "", b.text(b.loc[id]), b.loc[id] != 0
	}, nil)
	b.t, b.loc, b.esc = t, nil, nil
	return err
}

// newTables lays n texts out in id order and indexes them; ids in first are
// indexed first and win a clash of texts (HF: added tokens over the vocab).
// text returns an id's text as a string or as bytes.
func newTables(name string, n int, text func(int) (string, []byte, bool), first []int32) (*Tokenizer, error) {
	t := &Tokenizer{n: n, unk: -1, flags: make([]uint8, n), offs: make([]uint32, n+1)}
	size := 0
	for id := range n {
		if s, b, ok := text(id); ok {
			size += len(s) + len(b)
			t.flags[id] |= flagPresent
		}
	}
	var buf strings.Builder // String() does not copy
	buf.Grow(size)
	for id := range n {
		if s, b, ok := text(id); ok {
			buf.WriteString(s)
			buf.Write(b)
		}
		t.offs[id+1] = uint32(buf.Len())
	}
	t.pieces = buf.String()
	t.index = make([]int32, max(16, nextPow2(2*n)))
	for i := range t.index {
		t.index[i] = -1
	}
	isFirst := make([]bool, n)
	for _, id := range first {
		t.insert(id)
		isFirst[id] = true
	}
	for id := range n {
		if t.flags[id]&flagPresent == 0 || isFirst[id] || t.insert(int32(id)) {
			continue
		}
		if prev := t.lookup(t.IDToken(int32(id))); !isFirst[prev] {
			return nil, fmt.Errorf("%s: model.vocab has %.40q twice", name, t.IDToken(int32(id)))
		}
	}
	return t, nil
}

// insert adds id to the text index unless its text is already there.
func (t *Tokenizer) insert(id int32) bool {
	p := t.IDToken(id)
	if t.lookup(p) >= 0 {
		return false
	}
	mask := uint64(len(t.index) - 1)
	i := hashOf(p) & mask
	for t.index[i] >= 0 {
		i = (i + 1) & mask
	}
	t.index[i] = id
	return true
}

// merges reads the merge list at the scanner's position, resolving every
// merge to ids; a part or result missing from the vocabulary is an error,
// as in HF. Both "a b" strings and ["a", "b"] pairs are accepted.
func (b *builder) merges(s *scanner) error {
	t := b.t
	var left, joined []byte
	count := 0
	return s.array(func() error {
		var right []byte
		if s.peek() == '[' {
			n := 0
			err := s.array(func() error {
				v, err := s.str()
				if n == 0 {
					left = append(left[:0], v...)
				} else {
					right = v
				}
				n++
				return err
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return s.errorf("merge %d has %d parts, want 2", count, n)
			}
		} else {
			v, err := s.str()
			if err != nil {
				return err
			}
			sp := bytes.IndexByte(v, ' ')
			if sp < 0 || bytes.IndexByte(v[sp+1:], ' ') >= 0 {
				return s.errorf("merge %d %.40q is not two space-separated parts", count, v)
			}
			left, right = append(left[:0], v[:sp]...), v[sp+1:]
		}
		joined = append(append(joined[:0], left...), right...)
		x, y, z := lookupIn(t, left), lookupIn(t, right), lookupIn(t, joined)
		if x < 0 || y < 0 || z < 0 {
			return s.errorf("merge %d (%.30q, %.30q) uses a token missing from the vocab", count, left, right)
		}
		if count%mergeChunk == 0 {
			b.pairs = append(b.pairs, make([][3]int32, 0, mergeChunk))
		}
		last := &b.pairs[len(b.pairs)-1]
		*last = append(*last, [3]int32{x, y, z})
		count++
		return nil
	})
}

// finish adds the added tokens to the vocabulary tables and builds the
// merge table.
func (b *builder) finish(addedSection []byte) (*Tokenizer, error) {
	var added []addedJSON
	if addedSection != nil && string(addedSection) != "null" {
		if n := bytes.Count(addedSection, []byte(`"content"`)); n > maxAddedTokens {
			return nil, fmt.Errorf("%s: %d added tokens is more than the %d allowed", b.name, n, maxAddedTokens)
		}
		if err := json.Unmarshal(addedSection, &added); err != nil {
			return nil, fmt.Errorf("%s: added_tokens: %v", b.name, err)
		}
	}
	vocab := b.t
	n := vocab.n
	byID := make(map[int32]addedJSON, len(added))
	var first []int32
	for _, a := range added {
		if a.ID < 0 || a.ID >= maxID {
			return nil, fmt.Errorf("%s: added token %.40q has id %d outside [0, %d)", b.name, a.Content, a.ID, maxID)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("%s: added token %d has empty content", b.name, a.ID)
		}
		n = max(n, int(a.ID)+1)
		byID[int32(a.ID)] = a
		first = append(first, int32(a.ID))
	}
	t, err := newTables(b.name, n, func(id int) (string, []byte, bool) {
		if a, ok := byID[int32(id)]; ok {
			return a.Content, nil, true
		}
		return vocab.IDToken(int32(id)), nil, id < vocab.n && vocab.flags[id]&flagPresent != 0
	}, first)
	if err != nil {
		return nil, err
	}
	for id, a := range byID {
		t.flags[id] |= flagAdded
		if a.Special {
			t.flags[id] |= flagSpecial
		}
	}
	t.fuseUnk, t.byteFallback, t.ignoreMerges = b.opt.fuseUnk, b.opt.byteFallback, b.opt.ignoreMerges
	for i := range t.byteID {
		t.byteID[i] = vocab.lookup(fmt.Sprintf("<0x%02X>", i))
		if t.byteID[i] >= 0 {
			t.flags[t.byteID[i]] |= flagByte
		}
	}
	if b.opt.hasUnk {
		t.unk = t.lookup(b.opt.unk)
	}
	t.buildMerges(b.pairs)
	b.pairs = nil
	for _, a := range added {
		t.added = append(t.added, addedToken{content: a.Content, id: int32(a.ID), lstrip: a.LStrip,
			rstrip: a.RStrip, singleWrd: a.SingleWord, normalized: a.Normalized})
	}
	return t, nil
}

const mergeChunk = 1 << 16

// buildMerges stores merges in CSR form. A later duplicate of a pair takes
// the later rank, as HF's HashMap insert and transformers.js' Map do.
func (t *Tokenizer) buildMerges(chunks [][][3]int32) {
	t.mergeStart = make([]uint32, t.n+1)
	total := 0
	for _, c := range chunks {
		for _, p := range c {
			t.mergeStart[p[0]+1]++
		}
		total += len(c)
	}
	for i := 1; i <= t.n; i++ {
		t.mergeStart[i] += t.mergeStart[i-1]
	}
	t.merges = make([]mergeEntry, total)
	fill := slices.Clone(t.mergeStart[:t.n])
	rank := int32(0)
	for _, c := range chunks {
		for _, p := range c {
			t.merges[fill[p[0]]] = mergeEntry{right: p[1], rank: rank, id: p[2]}
			fill[p[0]]++
			rank++
		}
	}
	for a := range t.n {
		row := t.merges[t.mergeStart[a]:t.mergeStart[a+1]]
		if len(row) < 2 {
			continue
		}
		slices.SortStableFunc(row, func(x, y mergeEntry) int { return int(x.right) - int(y.right) })
		for i := len(row) - 1; i > 0; i-- {
			if row[i-1].right == row[i].right {
				row[i-1] = row[i] // an earlier duplicate is shadowed by the later rank
			}
		}
	}
}

func (t *Tokenizer) byteFallbackComplete() bool {
	if !t.byteFallback {
		return false
	}
	for _, id := range t.byteID {
		if id < 0 {
			return false
		}
	}
	return true
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
