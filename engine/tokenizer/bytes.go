package tokenizer

import "strings"

// TokenBytes returns the bytes a token decodes to on its own: a byte-fallback
// token's byte, or the piece after the decoder's replacements ('▁' → ' ').
// byteToken reports the former; special tokens return their text.
func (t *Tokenizer) TokenBytes(id int32) (b []byte, byteToken bool) {
	if id < 0 || int(id) >= t.n || t.flags[id]&flagPresent == 0 {
		return nil, false
	}
	if t.dec.byteFallback && t.flags[id]&flagByte != 0 {
		return []byte{t.byteValue(id)}, true
	}
	piece := t.IDToken(id)
	for _, r := range t.dec.replace {
		piece = strings.ReplaceAll(piece, r.from, r.to)
	}
	return []byte(piece), false
}
