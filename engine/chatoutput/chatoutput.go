// Package chatoutput turns the token ids a model generates into the text a
// chat shows: it stops on the model's stop tokens and on user stop strings
// (also when they span tokens), and splits Gemma's thinking channel
// (<|channel>thought\n … <channel|>) from the answer. Pure Go; the
// generation loop feeds it one id at a time.
//
// Port of the output post-processing described for Gemma 4 (mlx-vlm /
// mlx-bun): the stop set is the union of config.json's and
// generation_config.json's eos_token_id ({<eos>, <turn|>, <|tool_response>});
// the reasoning is split on the channel token ids, never on their text, and
// its leading "thought\n" is dropped.
package chatoutput

import (
	"encoding/json"
	"fmt"
	"strings"

	"perch/engine/tokenizer"
)

// StopIDs is the union of config.json's and generation_config.json's
// eos_token_id lists (either may be missing).
func StopIDs(configEOS, genEOS []int32) map[int32]bool {
	stop := make(map[int32]bool, len(configEOS)+len(genEOS))
	for _, id := range configEOS {
		stop[id] = true
	}
	for _, id := range genEOS {
		stop[id] = true
	}
	return stop
}

// ParseEOS reads an eos_token_id field, which the files write as a number
// or a list of numbers; null or missing gives none.
func ParseEOS(raw json.RawMessage) ([]int32, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	var one int32
	if err := json.Unmarshal(raw, &one); err == nil {
		return []int32{one}, nil
	}
	var list []int32
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("eos_token_id: want a token id or a list of ids, got %.40s", s)
	}
	return list, nil
}

// Channel tokens as the Gemma 4 vocabulary spells them.
const (
	ChannelOpenText  = "<|channel>"
	ChannelCloseText = "<channel|>"
	thoughtPrefix    = "thought\n"
)

// Config says when to stop and how to split.
type Config struct {
	Stop        map[int32]bool // stop token ids (StopIDs)
	StopStrings []string       // user stop sequences, matched in the answer text
	// SkipSpecial drops other special tokens from the text; keep them
	// (false) when a tool-call parser reads the answer (<|tool_call>…).
	SkipSpecial bool
}

// Delta is newly completed text.
type Delta struct {
	Thinking string
	Text     string
}

// StopReason says why generation must end.
type StopReason struct {
	Token  int32  // the stop token id, or -1
	String string // the stop string matched, or ""
}

// Splitter consumes generated ids in order. Not safe for concurrent use.
type Splitter struct {
	tok         *tokenizer.Tokenizer
	cfg         Config
	open, close int32 // channel token ids, -1 when the vocabulary has none
	stream      *tokenizer.Stream
	thinking    bool
	thoughtSeen int    // bytes of "thought\n" matched at the start of a channel
	thoughtHeld string // those bytes, released if the prefix breaks off
	held        string // answer text that may be the start of a stop string
	maxStop     int
	stopped     *StopReason
}

// New starts a splitter. The channel tokens are looked up by their text in
// the tokenizer; a vocabulary without them never splits.
func New(tok *tokenizer.Tokenizer, cfg Config) *Splitter {
	s := &Splitter{tok: tok, cfg: cfg, open: -1, close: -1, stream: tok.NewStream(cfg.SkipSpecial)}
	if id, ok := tok.TokenID(ChannelOpenText); ok {
		s.open = id
	}
	if id, ok := tok.TokenID(ChannelCloseText); ok {
		s.close = id
	}
	// Stop strings are matched as valid UTF-8, so a cut never splits a
	// character.
	s.cfg.StopStrings = nil
	for _, st := range cfg.StopStrings {
		if st = strings.ToValidUTF8(st, "\uFFFD"); st != "" {
			s.cfg.StopStrings = append(s.cfg.StopStrings, st)
			s.maxStop = max(s.maxStop, len(st))
		}
	}
	return s
}

// Add consumes one id and returns the text it completes. When generation
// must stop, stop is non-nil and the delta already holds everything left
// to show (no Flush needed); later calls return nothing.
func (s *Splitter) Add(id int32) (Delta, *StopReason) {
	if s.stopped != nil {
		return Delta{}, s.stopped
	}
	var d Delta
	switch {
	case s.cfg.Stop[id]:
		d = s.Flush()
		if s.stopped == nil { // a stop string completed by the flush wins
			s.stopped = &StopReason{Token: id}
		}
		return d, s.stopped
	case id == s.open && s.open >= 0:
		d = s.switchChannel(true)
		return d, s.stopped
	case id == s.close && s.close >= 0:
		return s.switchChannel(false), s.stopped
	}
	text := s.stream.Add(id)
	if s.thinking {
		d.Thinking = s.thought(text)
		return d, nil
	}
	d.Text = s.answer(text)
	return d, s.stopped
}

// Flush returns the text still held when generation ends without a stop
// token (token budget, cancellation): an unfinished character becomes
// U+FFFD, a partial stop string is shown as it is.
func (s *Splitter) Flush() Delta {
	var d Delta
	rest := s.stream.Flush()
	if s.thinking {
		d.Thinking = s.thoughtHeld + rest
		s.thoughtHeld = ""
		return d
	}
	d.Text = s.answer(rest)
	if s.stopped == nil {
		d.Text += s.held
		s.held = ""
	}
	return d
}

// switchChannel ends the current channel's text and enters thinking (true)
// or the answer (false).
func (s *Splitter) switchChannel(thinking bool) Delta {
	d := s.Flush()
	if s.stopped != nil {
		return d
	}
	s.thinking, s.thoughtSeen, s.thoughtHeld = thinking, 0, ""
	return d
}

// thought drops the "thought\n" that opens the channel, across tokens.
func (s *Splitter) thought(text string) string {
	for s.thoughtSeen < len(thoughtPrefix) && text != "" {
		n := min(len(text), len(thoughtPrefix)-s.thoughtSeen)
		if text[:n] != thoughtPrefix[s.thoughtSeen:s.thoughtSeen+n] {
			out := s.thoughtHeld + text
			s.thoughtSeen, s.thoughtHeld = len(thoughtPrefix), ""
			return out
		}
		s.thoughtSeen += n
		s.thoughtHeld += text[:n]
		text = text[n:]
	}
	if s.thoughtSeen == len(thoughtPrefix) {
		s.thoughtHeld = ""
	}
	return text
}

// answer appends text to the held answer, stops at the stop string that
// completes first (as a token-by-token check would see it; ties go to the
// one that starts first), and returns what can no longer be part of one.
func (s *Splitter) answer(text string) string {
	if s.maxStop == 0 {
		return text
	}
	buf := s.held + text
	first, end, which := -1, 0, ""
	for _, st := range s.cfg.StopStrings {
		if st == "" {
			continue
		}
		if i := strings.Index(buf, st); i >= 0 && (first < 0 || i+len(st) < end || (i+len(st) == end && i < first)) {
			first, end, which = i, i+len(st), st
		}
	}
	if first >= 0 {
		s.held = ""
		s.stopped = &StopReason{Token: -1, String: which}
		return buf[:first]
	}
	keep := 0 // longest suffix of buf that begins some stop string
	for k := min(len(buf), s.maxStop-1); k > 0; k-- {
		for _, st := range s.cfg.StopStrings {
			if len(st) > k && strings.HasPrefix(st, buf[len(buf)-k:]) {
				keep = k
				break
			}
		}
		if keep > 0 {
			break
		}
	}
	s.held = buf[len(buf)-keep:]
	return buf[:len(buf)-keep]
}

// Thinking reports whether the splitter is inside the thought channel.
func (s *Splitter) Thinking() bool { return s.thinking }
