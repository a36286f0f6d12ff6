package engine

import (
	"perch/engine/chatoutput"
)

// output turns generated ids into Token events through chatoutput's
// splitter: UTF-8-safe deltas, the thought channel marked as thinking, stop
// tokens and stop strings (matched across token boundaries).
type output struct {
	j     *job
	split *chatoutput.Splitter
}

func (e *Engine) newOutput(j *job) *output {
	stops := e.stops
	if j.req.IgnoreEOS {
		stops = nil
	}
	return &output{j: j, split: chatoutput.New(e.tok, chatoutput.Config{Stop: stops, StopStrings: j.req.Stop, SkipSpecial: true})}
}

// token handles one id; false means a stop token or stop string ended the answer.
func (o *output) token(id int32) bool {
	d, stop := o.split.Add(id)
	if stop != nil && stop.Token == id {
		o.emit(-1, d) // text held back until now; the stop token itself shows nothing
		return false
	}
	o.emit(id, d)
	return stop == nil
}

// flush emits what the splitter still holds when generation ends early.
func (o *output) flush() { o.emit(-1, o.split.Flush()) }

// emit sends a delta as one or two events (thinking text, then answer text);
// a token that completes no text still gets an event, so callers can count.
func (o *output) emit(id int32, d chatoutput.Delta) {
	if d.Thinking == "" && d.Text == "" {
		if id >= 0 {
			o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Thinking: o.split.Thinking()}})
		}
		return
	}
	if d.Thinking != "" {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: d.Thinking, Thinking: true}})
		id = -1
	}
	if d.Text != "" {
		o.j.send(Event{Kind: EventToken, Token: Token{ID: id, Text: d.Text}})
	}
}
