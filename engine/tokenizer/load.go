package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"
)

// Size guards, checked before anything is allocated in proportion to them.
const (
	maxTokenizerJSON = 512 << 20 // Gemma's is 33 MB
	maxConfigJSON    = 64 << 20  // Gemma 3's tokenizer_config.json is 1.2 MB
	maxID            = 1 << 22   // Gemma's vocabulary has 262,145 ids
	maxAddedTokens   = 1 << 20
)

// Load reads dir/tokenizer.json and, when present, dir/tokenizer_config.json
// (special-token flags, bos/eos names, clean_up_tokenization_spaces).
func Load(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	data, err := readCapped(path, maxTokenizerJSON)
	if err != nil {
		return nil, err
	}
	t, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	cfg, err := readCapped(cfgPath, maxConfigJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := t.applyConfig(cfgPath, cfg); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, fmt.Errorf("%s: %d MiB is larger than the %d MiB a tokenizer file may be", path, st.Size()>>20, limit>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d MiB a tokenizer file may be", path, limit>>20)
	}
	return data, nil
}

// parse builds a Tokenizer from the bytes of a tokenizer.json; name is used
// in errors.
func parse(name string, data []byte) (t *Tokenizer, err error) {
	defer func() { // belt and braces: no panic reaches the caller
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%s: malformed tokenizer (%v)", name, r)
		}
	}()
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text (is this really a tokenizer.json?)", name)
	}
	s := &scanner{file: name, data: data}
	if s.peek() != '{' {
		return nil, fmt.Errorf("%s: not a JSON object (is this really a tokenizer.json?)", name)
	}
	var raw struct{ added, normalizer, preTok, post, decoder []byte }
	modelAt := -1
	err = s.object(func(key []byte) error {
		var dst *[]byte
		switch string(key) {
		case "added_tokens":
			dst = &raw.added
		case "normalizer":
			dst = &raw.normalizer
		case "pre_tokenizer":
			dst = &raw.preTok
		case "post_processor":
			dst = &raw.post
		case "decoder":
			dst = &raw.decoder
		case "model":
			modelAt = s.pos
			return s.skip(0)
		default:
			return s.skip(0)
		}
		v, err := s.raw()
		*dst = v
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	if modelAt < 0 {
		return nil, fmt.Errorf("%s: no \"model\" section", name)
	}
	b := &builder{name: name, data: data}
	if err := b.model(modelAt); err != nil {
		return nil, err
	}
	if err := b.addedTokens(raw.added); err != nil {
		return nil, err
	}
	if t, err = b.finish(); err != nil {
		return nil, err
	}
	if t.norm, err = parseNormalizer(name, raw.normalizer); err != nil {
		return nil, err
	}
	if err := checkPreTokenizer(name, raw.preTok, t.norm); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(name, raw.post); err != nil {
		return nil, err
	}
	if t.dec, err = parseDecoder(name, raw.decoder); err != nil {
		return nil, err
	}
	t.buildAddedTries(b.added)
	if !t.byteFallbackComplete() && t.unk < 0 {
		return nil, fmt.Errorf("%s: model has no unk_token and no complete byte fallback: some text could not be encoded", name)
	}
	t.bos, t.eos = -1, -1
	if len(t.prefix) > 0 {
		t.bos = t.prefix[0]
	}
	return t, nil
}

// builder collects the tables while the model section is scanned.
type builder struct {
	name  string
	data  []byte
	arena []byte     // vocab texts as read
	recs  []vocabRec // one per vocab entry
	pairs [][3]int32 // merges as (left, right, new id), in rank order
	opt   struct {   // the BPE model's options
		unk                           string
		hasUnk, byteFallback, fuseUnk bool
		ignoreMerges                  bool
	}
	added []addedJSON
	maxID int32
}

type vocabRec struct {
	off, len uint32
	id       int32
}

type addedJSON struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

func (b *builder) model(at int) error {
	s := &scanner{file: b.name, data: b.data, pos: at}
	vocabAt, mergesAt := -1, -1
	typ := "BPE"
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			var v []byte
			v, err = s.str()
			typ = string(v)
		case "vocab":
			vocabAt = s.pos
			err = s.skip(0)
		case "merges":
			mergesAt = s.pos
			err = s.skip(0)
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
				_, err = s.raw()
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
	if typ != "BPE" {
		return fmt.Errorf("%s: model type %q is not supported (only BPE, as Gemma uses)", b.name, typ)
	}
	if vocabAt < 0 {
		return fmt.Errorf("%s: model has no vocab", b.name)
	}
	if err := b.vocab(vocabAt); err != nil {
		return err
	}
	if mergesAt >= 0 {
		return b.mergeList(mergesAt)
	}
	return nil
}

func (b *builder) vocab(at int) error {
	s := &scanner{file: b.name, data: b.data, pos: at}
	b.maxID = -1
	var seen []uint64 // bitset of ids
	return s.object(func(key []byte) error {
		id, err := s.integer(maxID - 1)
		if err != nil {
			return fmt.Errorf("%w (model.vocab %.40q)", err, key)
		}
		for int(id>>6) >= len(seen) {
			seen = append(seen, make([]uint64, len(seen)+1)...)
		}
		if seen[id>>6]&(1<<(id&63)) != 0 {
			return s.errorf("model.vocab gives id %d to more than one token (%.40q)", id, key)
		}
		seen[id>>6] |= 1 << (id & 63)
		b.recs = append(b.recs, vocabRec{uint32(len(b.arena)), uint32(len(key)), int32(id)})
		b.arena = append(b.arena, key...)
		b.maxID = max(b.maxID, int32(id))
		return nil
	})
}

// mergeList resolves every merge to ids as it is read; a merge whose parts or
// result are not in the vocabulary is an error, as in HF.
func (b *builder) mergeList(at int) error {
	idx := make(map[string]int32, len(b.recs))
	for _, r := range b.recs {
		idx[string(b.arena[r.off:r.off+r.len])] = r.id
	}
	s := &scanner{file: b.name, data: b.data, pos: at}
	var left, joined []byte
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
				return s.errorf("merge %d has %d parts, want 2", len(b.pairs), n)
			}
		} else {
			v, err := s.str()
			if err != nil {
				return err
			}
			sp := bytes.IndexByte(v, ' ')
			if sp < 0 || bytes.IndexByte(v[sp+1:], ' ') >= 0 {
				return s.errorf("merge %d %.40q is not two space-separated parts", len(b.pairs), v)
			}
			left, right = append(left[:0], v[:sp]...), v[sp+1:]
		}
		joined = append(append(joined[:0], left...), right...)
		a, okA := idx[string(left)]
		c, okB := idx[string(right)]
		n, okN := idx[string(joined)]
		if !okA || !okB || !okN {
			return s.errorf("merge %d (%.30q, %.30q) uses a token missing from the vocab", len(b.pairs), left, right)
		}
		b.pairs = append(b.pairs, [3]int32{a, c, n})
		return nil
	})
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
		b.maxID = max(b.maxID, int32(a.ID))
	}
	return nil
}

// finish lays the pieces out in id order and builds the lookup tables.
func (b *builder) finish() (*Tokenizer, error) {
	n := int(b.maxID) + 1
	t := &Tokenizer{n: n, unk: -1, fuseUnk: b.opt.fuseUnk, byteFallback: b.opt.byteFallback, ignoreMerges: b.opt.ignoreMerges}
	text := make([][]byte, n)
	t.flags = make([]uint8, n)
	for _, r := range b.recs {
		text[r.id] = b.arena[r.off : r.off+r.len]
		t.flags[r.id] |= flagPresent
	}
	for _, a := range b.added {
		text[a.ID] = []byte(a.Content)
		t.flags[a.ID] |= flagPresent | flagAdded
		if a.Special {
			t.flags[a.ID] |= flagSpecial
		}
	}
	size := 0
	for _, p := range text {
		size += len(p)
	}
	buf := make([]byte, 0, size)
	t.offs = make([]uint32, n+1)
	for id, p := range text {
		buf = append(buf, p...)
		t.offs[id+1] = uint32(len(buf))
	}
	t.pieces = string(buf)
	t.index = make([]int32, max(16, nextPow2(2*n)))
	for i := range t.index {
		t.index[i] = -1
	}
	// Added tokens first: their text → id wins over the vocab, as in HF.
	for _, a := range b.added {
		t.insert(int32(a.ID))
	}
	for _, r := range b.recs {
		if t.flags[r.id]&flagAdded != 0 || t.insert(r.id) {
			continue
		}
		if prev := t.lookup(t.IDToken(r.id)); t.flags[prev]&flagAdded == 0 {
			return nil, fmt.Errorf("%s: model.vocab has %.40q twice", b.name, t.IDToken(r.id))
		}
	}
	for i := range t.byteID {
		t.byteID[i] = t.lookup(fmt.Sprintf("<0x%02X>", i))
		if t.byteID[i] >= 0 {
			t.flags[t.byteID[i]] |= flagByte
		}
	}
	if b.opt.hasUnk {
		t.unk = t.lookup(b.opt.unk)
	}
	t.buildMerges(b.pairs)
	return t, nil
}

// insert adds id to the piece index unless its text is already there.
func (t *Tokenizer) insert(id int32) bool {
	p := t.IDToken(id)
	if t.lookup(p) >= 0 {
		return false
	}
	mask := uint64(len(t.index) - 1)
	i := hashString(p) & mask
	for t.index[i] >= 0 {
		i = (i + 1) & mask
	}
	t.index[i] = id
	return true
}

// buildMerges stores merges in CSR form; a later duplicate pair takes the
// later rank, as HF's HashMap insert and transformers.js' Map do.
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
		// Keep the last rank of a duplicated pair.
		out := row[:0]
		for i, e := range row {
			if i+1 < len(row) && row[i+1].right == e.right {
				continue
			}
			out = append(out, e)
		}
		for i := len(out); i < len(row); i++ {
			row[i] = mergeEntry{right: 1<<31 - 1, rank: 1<<31 - 1, id: -1} // unreachable tail
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
