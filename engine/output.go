package engine

import (
	"strings"

	"perch/engine/tokenizer"
)

// output turns generated ids into Token events: UTF-8-safe text deltas,
// the thought channel marked as thinking, and stop strings matched across
// token boundaries (text that could still start one is held back).
type output struct {
	j          *job
	stream     *tokenizer.Stream
	open, shut int32 // <|channel> / <channel|> ids, -1 if absent
	thinking   bool
	atThought  bool   // just after <|channel>: drop a leading "thought\n"
	held       string // text withheld while it may begin a stop string
	stops      []string
}

func (e *Engine) newOutput(j *job) *output {
	o := &output{j: j, stream: e.tok.NewStream(true), open: -1, shut: -1, stops: j.req.Stop}
	if id, ok := e.tok.TokenID("<|channel>"); ok {
		o.open = id
	}
	if id, ok := e.tok.TokenID("<channel|>"); ok {
		o.shut = id
	}
	return o
}

// token handles one id; false means a stop string ended the answer.
func (o *output) token(id int32) bool {
	switch id {
	case o.open:
		o.emitHeld()
		o.thinking, o.atThought = true, true
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: true}})
		return true
	case o.shut:
		o.emitHeld()
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: true}})
		o.thinking = false
		return true
	}
	text := o.stream.Add(id)
	if o.atThought {
		o.held += text
		if strings.HasPrefix("thought\n", o.held) { // still (part of) the channel name
			if o.held == "thought\n" {
				o.held, o.atThought = "", false
			}
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: true}})
			return true
		}
		text = strings.TrimPrefix(o.held, "thought\n")
		o.held, o.atThought = "", false
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: text, Thinking: true}})
		return true
	}
	if o.thinking || len(o.stops) == 0 {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: text, Thinking: o.thinking}})
		return true
	}
	buf := o.held + text
	for _, s := range o.stops {
		if s == "" {
			continue
		}
		if i := strings.Index(buf, s); i >= 0 {
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: buf[:i]}})
			o.held = ""
			return false
		}
	}
	keep := 0 // longest suffix of buf that is a prefix of a stop string
	for _, s := range o.stops {
		for k := min(len(s)-1, len(buf)); k > keep; k-- {
			if strings.HasSuffix(buf, s[:k]) {
				keep = k
				break
			}
		}
	}
	o.held = buf[len(buf)-keep:]
	o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: buf[:len(buf)-keep]}})
	return true
}

func (o *output) emitHeld() {
	if o.held != "" {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: -1, Text: o.held, Thinking: o.thinking}})
	}
	o.held, o.atThought = "", false
}

// flush emits whatever the stream decoder and the stop matcher still hold.
func (o *output) flush() {
	rest := o.held + o.stream.Flush()
	o.held = ""
	if rest != "" {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: -1, Text: rest, Thinking: o.thinking}})
	}
}
