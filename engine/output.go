package engine

import (
	"perch/engine/chatoutput"
	"perch/engine/tokenizer"
	"perch/engine/toolcall"
)

// output turns generated ids into Token events through chatoutput's
// splitter: UTF-8-safe deltas, the thought channel marked as thinking, stop
// tokens and stop strings (matched across token boundaries). With tools,
// the answer also goes through toolcall's parser, so calls come out as
// ToolCall events and their markup never as text.
type output struct {
	j     *job
	split *chatoutput.Splitter
	calls *toolcall.Parser // nil without tools
	// markup maps the tool syntax's token ids to their text (the splitter
	// drops special tokens; the parser reads these).
	markup       map[int32]string
	tok          *tokenizer.Tokenizer
	stops        map[int32]bool
	toolResponse int32 // <|tool_response>: the model hands over to the caller
	made         int   // tool calls that parsed
	oneCall      bool  // parallel_tool_calls false: the first call ends the answer
}

func (e *Engine) newOutput(j *job) *output {
	stops := e.stops
	if j.req.IgnoreEOS {
		stops = nil
	}
	o := &output{j: j, toolResponse: -1, tok: e.tok, stops: stops,
		split: chatoutput.New(e.tok, chatoutput.Config{Stop: stops, StopStrings: j.req.Stop, SkipSpecial: true})}
	if id, ok := e.tok.TokenID(toolcall.ResponseOpen); ok {
		o.toolResponse = id
	}
	if len(j.req.Tools) > 0 {
		o.calls = &toolcall.Parser{}
		// Under a grammar the single call ends in <|tool_response> by itself.
		o.oneCall = j.req.ParallelToolCalls != nil && !*j.req.ParallelToolCalls && j.constraint == nil
		o.markup = map[int32]string{}
		for _, m := range []string{toolcall.CallOpen, toolcall.CallClose, toolcall.Quote} {
			if id, ok := e.tok.TokenID(m); ok {
				o.markup[id] = m
			}
		}
	}
	return o
}

// token handles one id; false means a stop token, a stop string or (with
// parallel_tool_calls false) a finished call ended the answer.
func (o *output) token(id int32) bool {
	m, ok := o.markup[id]
	if !ok && o.calls != nil && o.calls.InCall() && !o.stops[id] && o.tok.IsSpecial(id) {
		// Inside a call a special token (<|channel>, say, in a string the
		// template wrote unescaped) is the call's text, not a switch.
		m, ok = o.tok.IDToken(id), true
	}
	if ok {
		o.emit(id, o.split.Flush(), m)
		return !o.oneCall || o.made == 0
	}
	d, stop := o.split.Add(id)
	if stop != nil && stop.Token == id {
		o.emit(-1, d, "") // text held back until now; the stop token itself shows nothing
		o.closeCalls()    // a call left open is reported
		return false
	}
	o.emit(id, d, "")
	if stop != nil {
		o.closeCalls()
	}
	return stop == nil && (!o.oneCall || o.made == 0)
}

// flush emits what the splitter still holds when generation ends early.
func (o *output) flush() {
	o.emit(-1, o.split.Flush(), "")
	o.closeCalls()
}

// stopReason names why a stop token or stop string ended the answer: a
// call handed over to the caller, or a plain stop.
func (o *output) stopReason(last int32) string {
	if o.made > 0 || (last == o.toolResponse && o.calls != nil) {
		return StopToolCalls
	}
	return StopEOS
}

// closeCalls ends the parser: an unclosed call is reported.
func (o *output) closeCalls() {
	if o.calls != nil {
		o.send(-1, o.calls.Close())
	}
}

// emit sends a delta as events (thinking text, then answer text, then the
// calls it completes); markup is a tool-syntax token's text for the parser.
// A token that completes no text still gets an event, so callers can count.
func (o *output) emit(id int32, d chatoutput.Delta, markup string) {
	if d.Thinking != "" {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: d.Thinking, Thinking: true}})
		id = -1
	}
	if o.calls == nil {
		if d.Text != "" {
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: d.Text}})
		} else if id >= 0 {
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: o.split.Thinking()}})
		}
		return
	}
	evs := o.calls.Write(d.Text)
	if markup != "" {
		evs = append(evs, o.calls.Write(markup)...)
	}
	if id >= 0 && (len(evs) == 0 || evs[0].Kind != toolcall.Text) {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: o.split.Thinking()}})
		id = -1
	}
	o.send(id, evs)
}

// send delivers the parser's events; the first text event carries id.
func (o *output) send(id int32, evs []toolcall.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case toolcall.ToolCall:
			if ev.Call.Err == nil {
				o.made++
			}
			o.j.send(Event{Kind: EventToolCall, Call: ev.Call})
		default:
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: ev.Text, Thinking: ev.Kind == toolcall.Thinking}})
			id = -1
		}
	}
}
