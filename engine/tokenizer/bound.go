package tokenizer

// MaxTokenBytes bounds how many bytes of input text one token can stand
// for, so that len(text)/MaxTokenBytes() is a lower bound on the number of
// tokens Encode gives: a caller can refuse text that cannot fit a context
// without tokenizing it. It is 0 when no bound holds (an unknown token that
// fuses a run of unknown characters, or a normalizer that deletes text).
// It walks the vocabulary (a fraction of a millisecond for 262k tokens).
func (t *Tokenizer) MaxTokenBytes() int {
	if t.unk >= 0 && t.fuseUnk && !t.byteFallback {
		return 0
	}
	longest := 4 // one unknown character
	for id := 0; id < t.n; id++ {
		longest = max(longest, int(t.offs[id+1]-t.offs[id]))
	}
	// A Replace that shortens text lets one token's piece stand for more
	// input than its own length.
	for _, op := range t.norm {
		switch {
		case op.from == "":
		case op.to == "":
			return 0
		case len(op.from) > len(op.to):
			longest *= (len(op.from) + len(op.to) - 1) / len(op.to)
		}
	}
	return longest
}
