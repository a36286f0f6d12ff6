// Package tokenizer encodes and decodes text for Gemma checkpoints from their
// Hugging Face tokenizer.json (BPE with byte fallback), exactly as the
// reference tokenizers do.
//
// It owns one model's text ↔ ids mapping. Data flows: tokenizer.json in
// (Load: a pull parser straight into compact tables, checked against an
// allowlist), then text → ids (Encode) and ids → text (Decode, Stream).
//
// Port of the Hugging Face `tokenizers` BPE pipeline (added-token split,
// normalizer, rank-ordered merges, byte fallback, decoder chain) as Gemma
// uses it. Parity notes:
//   - Added tokens are split leftmost-longest over the raw text, as HF's
//     Aho-Corasick matcher and transformers.js do; the text between them is
//     normalized and merged as one word (Gemma's Split pre-tokenizer is a
//     no-op once ' ' became '▁').
//   - Merges pop the lowest (rank, position) pair from a heap over a linked
//     list of symbols: O(n log n) in the word length (HF's Word::merge_all).
//   - Characters missing from the vocabulary become their UTF-8 bytes
//     <0xNN> (byte_fallback); invalid UTF-8 in the input is kept byte for byte.
//   - Decoding turns each byte that cannot form a valid character into
//     U+FFFD, Go-style (HF replaces a whole invalid byte run); valid text is
//     identical. Stream uses the same rule, so Decode(ids) always equals the
//     concatenation of a Stream's outputs.
//
// Why not github.com/sugarme/tokenizer at run time (measured here on the
// real 262k Gemma 3 file by BenchmarkLoadGemma3, and in research/env.md §3):
// its loader takes 1.6-3 s and ~240 MB peak RSS and keeps 72 MiB of heap
// (ours: ~0.5 s, ~75 MB peak, 15 MiB); its BPE ignores byte_fallback,
// mis-splits added tokens and is quadratic on Gemma's single-word input;
// its ByteFallback decoder panics on a malformed <0x..> token and decodes
// a byte run all-or-nothing, which a stream cannot reproduce. So we parse
// tokenizer.json into compact tables ourselves and keep sugarme where it is
// right: the tests use its decoder chain as an independent oracle for
// Decode (TestDecodeMatchesSugarme).
//
// Only the components Gemma's files use are accepted (an allowlist, so a
// hostile tokenizer.json cannot smuggle in a backtracking regex); anything
// else is refused at Load with an error that names the file and the field.
package tokenizer

import "strconv"

// Tokenizer is immutable after Load and safe for concurrent use.
type Tokenizer struct {
	n      int      // ids are [0, n)
	pieces string   // every token's text, in id order
	offs   []uint32 // token id → pieces[offs[id]:offs[id+1]]
	flags  []uint8  // per id: flagPresent | flagSpecial | flagAdded | flagByte
	index  []int32  // open-addressing table: piece → id (-1 empty)

	// Merges in CSR form: for left id a, entries [mergeStart[a], mergeStart[a+1])
	// sorted by right id.
	mergeStart []uint32
	merges     []mergeEntry

	byteID       [256]int32 // id of <0xNN>, -1 if absent
	byteFallback bool
	unk          int32
	fuseUnk      bool
	ignoreMerges bool

	norm       []normOp
	added      []addedToken
	rawAdded   *trie // added tokens matched on the raw text
	normAdded  *trie // added tokens with normalized=true, matched after normalization
	rawPlain   *trie // the same two without special tokens (EncodePlain)
	normPlain  *trie
	prefix     []int32 // post-processor ids around the text when addSpecial
	suffix     []int32
	dec        decoder
	bos, eos   int32
	cleanupDec bool
}

type mergeEntry struct {
	right, rank, id int32
}

const (
	flagPresent = 1 << iota
	flagSpecial
	flagAdded
	flagByte // a <0xNN> byte-fallback token
)

// VocabSize is one more than the largest id (added tokens included).
func (t *Tokenizer) VocabSize() int { return t.n }

// IDToken returns the text of a token as stored in the vocabulary ("▁the",
// "<0x0A>", "<turn|>"), or "" for an unknown id.
func (t *Tokenizer) IDToken(id int32) string {
	if id < 0 || int(id) >= t.n {
		return ""
	}
	return t.pieces[t.offs[id]:t.offs[id+1]]
}

// TokenID looks a token up by its exact vocabulary text.
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	id := t.lookup(s)
	return id, id >= 0
}

// IsSpecial reports whether id is a special token (skipped by
// Decode(…, skipSpecial=true)).
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < t.n && t.flags[id]&flagSpecial != 0
}

// IsAdded reports whether id is an added token (matched whole in the text
// before BPE; special or not).
func (t *Tokenizer) IsAdded(id int32) bool {
	return id >= 0 && int(id) < t.n && t.flags[id]&flagAdded != 0
}

// BOS returns the beginning-of-sequence id named by tokenizer_config.json
// (bos_token), or, without one, the post-processor's leading token.
func (t *Tokenizer) BOS() (int32, bool) { return t.bos, t.bos >= 0 }

// EOS returns the id of tokenizer_config.json's eos_token. The generation
// loop stops on the union of config.json and generation_config.json ids;
// this is only the tokenizer's own notion.
func (t *Tokenizer) EOS() (int32, bool) { return t.eos, t.eos >= 0 }

// byteValue returns the byte of a <0xNN> token.
func (t *Tokenizer) byteValue(id int32) byte {
	p := t.IDToken(id)
	v, _ := strconv.ParseUint(p[3:5], 16, 8)
	return byte(v)
}

// lookup finds the id of an exact piece, or -1.
func (t *Tokenizer) lookup(s string) int32 { return lookupIn(t, s) }

func lookupIn[T string | []byte](t *Tokenizer, s T) int32 {
	if len(t.index) == 0 {
		return -1
	}
	mask := uint64(len(t.index) - 1)
	for i := hashOf(s) & mask; ; i = (i + 1) & mask {
		id := t.index[i]
		if id < 0 {
			return -1
		}
		if t.pieces[t.offs[id]:t.offs[id+1]] == string(s) {
			return id
		}
	}
}

// hashOf is FNV-1a; stable and allocation-free.
func hashOf[T string | []byte](s T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mergeOf returns the merge of the adjacent pair (a, b), if any.
func (t *Tokenizer) mergeOf(a, b int32) (rank, id int32, ok bool) {
	lo, hi := int(t.mergeStart[a]), int(t.mergeStart[a+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.merges[m].right < b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < int(t.mergeStart[a+1]) && t.merges[lo].right == b {
		return t.merges[lo].rank, t.merges[lo].id, true
	}
	return 0, 0, false
}
