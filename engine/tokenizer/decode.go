package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Decode turns ids back into text through the tokenizer.json decoder chain
// (Gemma: '▁' → ' ', <0xNN> bytes → UTF-8, fuse). Unknown ids are skipped,
// as in HF; with skipSpecial, special tokens are too. A byte that cannot
// form a valid UTF-8 character becomes U+FFFD.
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	s := t.NewStream(skipSpecial)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(s.Add(id))
	}
	b.WriteString(s.Flush())
	if t.cleanupDec {
		return cleanUpSpaces(b.String())
	}
	return b.String()
}

// cleanUpSpaces is transformers' clean_up_tokenization, applied when
// tokenizer_config.json sets clean_up_tokenization_spaces (Gemma does not).
func cleanUpSpaces(s string) string {
	for _, r := range [][2]string{{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
		{" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

// Stream decodes one token at a time for streaming output. Add returns only
// newly completed text and never a partial UTF-8 character: the bytes of a
// character spelled by several byte-fallback tokens are held until it is
// complete. Concatenating every Add and the final Flush equals Decode of
// the same ids (without clean_up_tokenization_spaces, which Gemma leaves off).
// A Stream is not safe for concurrent use.
type Stream struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte // start of a character from byte tokens
	tokens      int    // tokens decoded so far (for space-joining)
	strip       int    // leading strip characters still to remove
}

// NewStream starts an incremental decoder.
func (t *Tokenizer) NewStream(skipSpecial bool) *Stream {
	return &Stream{t: t, skipSpecial: skipSpecial, strip: t.dec.stripStart}
}

// Add decodes one more id and returns the text it completes.
func (s *Stream) Add(id int32) string {
	t := s.t
	if id < 0 || int(id) >= t.n || t.flags[id]&flagPresent == 0 || (s.skipSpecial && t.flags[id]&flagSpecial != 0) {
		return ""
	}
	var out []byte
	if t.dec.spaceJoin && s.tokens > 0 {
		out = append(out, ' ')
	}
	s.tokens++
	if t.dec.byteFallback && t.flags[id]&flagByte != 0 {
		s.pending = append(s.pending, t.byteValue(id))
		out = s.drain(out, false)
		return s.stripLeading(out)
	}
	out = s.drain(out, true)
	piece := t.IDToken(id)
	for _, r := range t.dec.replace {
		piece = strings.ReplaceAll(piece, r.from, r.to)
	}
	out = append(out, piece...)
	return s.stripLeading(out)
}

// Flush returns what is still held: the bytes of an unfinished character
// become U+FFFD each.
func (s *Stream) Flush() string {
	return s.stripLeading(s.drain(nil, true))
}

// drain moves complete characters from pending to out; with final, an
// unfinished tail is given up as U+FFFD per byte.
func (s *Stream) drain(out []byte, final bool) []byte {
	p := s.pending
	for len(p) > 0 {
		if !utf8.FullRune(p) {
			if !final {
				break
			}
			for range p {
				out = utf8.AppendRune(out, utf8.RuneError)
			}
			p = p[:0]
			break
		}
		r, w := utf8.DecodeRune(p)
		if r == utf8.RuneError && w == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, p[:w]...)
		}
		p = p[w:]
	}
	s.pending = append(s.pending[:0], p...)
	return out
}

// stripLeading applies a Strip decoder (after Fuse) to the start of the
// whole output.
func (s *Stream) stripLeading(out []byte) string {
	c := s.t.dec.stripChar
	for s.strip > 0 && len(out) > 0 {
		if !strings.HasPrefix(string(out), c) {
			s.strip = 0
			break
		}
		out = out[len(c):]
		s.strip--
	}
	return string(out)
}
