package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// builder turns the model section of a tokenizer.json into the Tokenizer's
// tables in a few flat allocations; vocabulary texts are copied once, from
// the file bytes straight into the final id-ordered string.
type builder struct {
	name   string
	data   []byte
	loc    []uint64 // per vocab id: start<<32 | length in data (or esc); 0 = no entry
	esc    []byte   // texts that had JSON escapes, unescaped
	vocabN int      // 1 + the largest vocab id
	opt    struct { // the BPE model's options
		unk                           string
		hasUnk, byteFallback, fuseUnk bool
		ignoreMerges                  bool
	}
	added []addedJSON
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

// build reads the model at byte offset at and the added_tokens section.
func (b *builder) build(at int, added []byte) (*Tokenizer, error) {
	s := &scanner{file: b.name, data: b.data, pos: at}
	vocabAt, mergesAt, mergesEnd := -1, -1, -1
	typ := "BPE"
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			var v []byte
			v, err = s.str()
			typ = string(v)
		case "vocab":
			s.skipSpace()
			vocabAt = s.pos
			err = s.skip(0)
		case "merges":
			s.skipSpace()
			mergesAt = s.pos
			err = s.skip(0)
			mergesEnd = s.pos
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
		return nil, err
	}
	if typ != "BPE" {
		return nil, fmt.Errorf("%s: model type %q is not supported (only BPE, as Gemma uses)", b.name, typ)
	}
	if vocabAt < 0 {
		return nil, fmt.Errorf("%s: model has no vocab", b.name)
	}
	if err := b.vocab(vocabAt); err != nil {
		return nil, err
	}
	if err := b.addedTokens(added); err != nil {
		return nil, err
	}
	t, err := b.tables()
	if err != nil {
		return nil, err
	}
	if mergesAt >= 0 {
		if err := b.merges(t, mergesAt, b.data[mergesAt:mergesEnd]); err != nil {
			return nil, err
		}
	} else {
		t.buildMerges(nil)
	}
	return t, nil
}

func (b *builder) vocab(at int) error {
	s := &scanner{file: b.name, data: b.data, pos: at}
	return s.object(func(key []byte) error {
		loc := uint64(s.strAt)<<32 | uint64(len(key)) // the key's bytes in data
		if s.strEscaped {
			loc = locEsc | uint64(len(b.esc))<<32 | uint64(len(key))
			b.esc = append(b.esc, key...)
		}
		id, err := s.integer(maxID - 1)
		if err != nil {
			return fmt.Errorf("%w (model.vocab %.40q)", err, key)
		}
		for int(id) >= len(b.loc) {
			b.loc = append(b.loc, make([]uint64, len(b.loc)+1024)...)
		}
		if b.loc[id] != 0 {
			return s.errorf("model.vocab gives id %d to more than one token (%.40q)", id, key)
		}
		b.loc[id] = loc + 1<<32 // +1 on the start so that 0 means "no entry"
		b.vocabN = max(b.vocabN, int(id)+1)
		return nil
	})
}

// text returns the vocab text of a loc.
func (b *builder) text(loc uint64) []byte {
	start, n := (loc&^locEsc)>>32-1, loc&0xffffffff
	if loc&locEsc != 0 {
		return b.esc[start : start+n]
	}
	return b.data[start : start+n]
}

func (b *builder) addedTokens(section []byte) error {
	if section == nil || string(section) == "null" {
		return nil
	}
	if n := bytes.Count(section, []byte(`"content"`)); n > maxAddedTokens {
		return fmt.Errorf("%s: %d added tokens is more than the %d allowed", b.name, n, maxAddedTokens)
	}
	if err := json.Unmarshal(section, &b.added); err != nil {
		return fmt.Errorf("%s: added_tokens: %v", b.name, err)
	}
	for _, a := range b.added {
		if a.ID < 0 || a.ID >= maxID {
			return fmt.Errorf("%s: added token %.40q has id %d outside [0, %d)", b.name, a.Content, a.ID, maxID)
		}
		if a.Content == "" {
			return fmt.Errorf("%s: added token %d has empty content", b.name, a.ID)
		}
	}
	return nil
}

// tables lays the texts out in id order and builds the text → id index.
func (b *builder) tables() (*Tokenizer, error) {
	n := b.vocabN
	for _, a := range b.added {
		n = max(n, int(a.ID)+1)
	}
	t := &Tokenizer{n: n, unk: -1, fuseUnk: b.opt.fuseUnk, byteFallback: b.opt.byteFallback, ignoreMerges: b.opt.ignoreMerges}
	t.flags = make([]uint8, n)
	addedText := make(map[int32]string, len(b.added))
	for _, a := range b.added {
		addedText[int32(a.ID)] = a.Content
		t.flags[a.ID] |= flagPresent | flagAdded
		if a.Special {
			t.flags[a.ID] |= flagSpecial
		}
	}
	size := 0
	for id := range n {
		if s, ok := addedText[int32(id)]; ok {
			size += len(s)
		} else if id < len(b.loc) && b.loc[id] != 0 {
			size += len(b.text(b.loc[id]))
			t.flags[id] |= flagPresent
		}
	}
	var buf strings.Builder // String() does not copy
	buf.Grow(size)
	t.offs = make([]uint32, n+1)
	for id := range n {
		if s, ok := addedText[int32(id)]; ok {
			buf.WriteString(s)
		} else if id < len(b.loc) && b.loc[id] != 0 {
			buf.Write(b.text(b.loc[id]))
		}
		t.offs[id+1] = uint32(buf.Len())
	}
	t.pieces = buf.String()
	t.index = make([]int32, max(16, nextPow2(2*n)))
	for i := range t.index {
		t.index[i] = -1
	}
	// Added tokens first: their text → id wins over the vocab, as in HF.
	for _, a := range b.added {
		t.insert(int32(a.ID))
	}
	for id := range min(n, len(b.loc)) {
		if b.loc[id] == 0 || t.flags[id]&flagAdded != 0 || t.insert(int32(id)) {
			continue
		}
		if prev := t.lookup(t.IDToken(int32(id))); t.flags[prev]&flagAdded == 0 {
			return nil, fmt.Errorf("%s: model.vocab has %.40q twice", b.name, t.IDToken(int32(id)))
		}
	}
	b.loc, b.esc = nil, nil
	for i := range t.byteID {
		t.byteID[i] = t.lookup(fmt.Sprintf("<0x%02X>", i))
		if t.byteID[i] >= 0 {
			t.flags[t.byteID[i]] |= flagByte
		}
	}
	if b.opt.hasUnk {
		t.unk = t.lookup(b.opt.unk)
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

// merges resolves every merge to ids as it is read; a merge whose parts or
// result are not in the vocabulary is an error, as in HF.
func (b *builder) merges(t *Tokenizer, at int, section []byte) error {
	perMerge := 2 // strings per merge: "a b" is one, ["a", "b"] two
	if bytes.HasPrefix(bytes.TrimLeft(section[1:], " \t\r\n"), []byte("[")) {
		perMerge = 4
	}
	pairs := make([][3]int32, 0, bytes.Count(section, []byte(`"`))/perMerge+1)
	s := &scanner{file: b.name, data: b.data, pos: at}
	var left, joined []byte
	err := s.array(func() error {
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
				return s.errorf("merge %d has %d parts, want 2", len(pairs), n)
			}
		} else {
			v, err := s.str()
			if err != nil {
				return err
			}
			sp := bytes.IndexByte(v, ' ')
			if sp < 0 || bytes.IndexByte(v[sp+1:], ' ') >= 0 {
				return s.errorf("merge %d %.40q is not two space-separated parts", len(pairs), v)
			}
			left, right = append(left[:0], v[:sp]...), v[sp+1:]
		}
		joined = append(append(joined[:0], left...), right...)
		a, c, n := lookupIn(t, left), lookupIn(t, right), lookupIn(t, joined)
		if a < 0 || c < 0 || n < 0 {
			return s.errorf("merge %d (%.30q, %.30q) uses a token missing from the vocab", len(pairs), left, right)
		}
		pairs = append(pairs, [3]int32{a, c, n})
		return nil
	})
	if err != nil {
		return err
	}
	t.buildMerges(pairs)
	return nil
}

// buildMerges stores merges in CSR form. A later duplicate of a pair takes
// the later rank, as HF's HashMap insert and transformers.js' Map do.
func (t *Tokenizer) buildMerges(pairs [][3]int32) {
	t.mergeStart = make([]uint32, t.n+1)
	for _, p := range pairs {
		t.mergeStart[p[0]+1]++
	}
	for i := 1; i <= t.n; i++ {
		t.mergeStart[i] += t.mergeStart[i-1]
	}
	t.merges = make([]mergeEntry, len(pairs))
	fill := slices.Clone(t.mergeStart[:t.n])
	for rank, p := range pairs {
		t.merges[fill[p[0]]] = mergeEntry{right: p[1], rank: int32(rank), id: p[2]}
		fill[p[0]]++
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

func (t *Tokenizer) buildAddedTries(added []addedJSON) {
	var raw, normed []addedToken
	for _, a := range added {
		at := addedToken{content: a.Content, id: int32(a.ID), lstrip: a.LStrip, rstrip: a.RStrip, singleWrd: a.SingleWord}
		if a.Normalized {
			at.content = t.normalize(at.content)
			normed = append(normed, at)
		} else {
			raw = append(raw, at)
		}
	}
	t.rawAdded, t.normAdded = newTrie(raw), newTrie(normed)
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
