// Package toolcall reads Gemma-4's output as it streams: answer text,
// thinking, and tool calls written in the model's own syntax,
//
//	<|tool_call>call:NAME{key:value,…}<tool_call|>
//
// with strings between <|"|> delimiters, numbers and booleans bare, None
// (Python's null, as the chat template renders it), nested {} and []. Each
// call comes out as soon as it closes, its arguments as a JSON object; a
// call that does not parse comes out as a Call with Err and its raw text.
// No markup ever reaches the text or thinking events.
//
// It inverts the checkpoint's chat template (format_argument): strings are
// read up to the closing delimiter whatever they hold ("}", ",", ":",
// newlines, the text "call:"), so parse(render(args)) == args for every
// argument object whose keys hold no ':' (a bare key ends at the first ':'
// in the template's syntax; no parser can tell more).
package toolcall

import (
	"crypto/rand"
	"encoding/json"
	"strings"
)

// The markup, as Gemma-4's vocabulary spells its special tokens.
const (
	CallOpen     = "<|tool_call>"
	CallClose    = "<tool_call|>"
	Quote        = `<|"|>`
	ChannelOpen  = "<|channel>"
	ChannelClose = "<channel|>"
	ResponseOpen = "<|tool_response>" // the model hands over to the caller: output ends
	thought      = "thought\n"        // opens the thought channel; not shown
)

// markers outside a call; the last three end the output (stop tokens), the
// others are structure, never shown.
var markers = []string{CallOpen, CallClose, Quote, ChannelOpen, ChannelClose,
	"<|tool>", "<tool|>", "<tool_response|>", ResponseOpen, "<turn|>", "<eos>"}

// Kind says what an Event carries.
type Kind int

const (
	Text     Kind = iota // Text: answer text
	Thinking             // Text: reasoning
	ToolCall             // Call
)

// Event is one piece of parsed output.
type Event struct {
	Kind Kind
	Text string
	Call Call
}

// Call is one tool call. With Err set the call did not parse: Raw holds its
// text (markup included) and Name what could be read of the name.
type Call struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
	Raw       string
	Err       error
}

type state int

const (
	inText state = iota
	inThinking
	inCall
)

// Parser consumes output text in order (Write, then Close). Not safe for
// concurrent use.
type Parser struct {
	// NewID names each call; nil gives "call_" and 24 random letters.
	NewID func() string

	state     state
	pend      string          // text not yet classified (may end in part of a marker)
	call      strings.Builder // the current call's text after CallOpen
	inString  bool            // inside a <|"|> string of the current call
	trimThink bool            // the thought channel just opened: drop "thought\n"
	done      bool            // a stop marker ended the output
}

// InCall reports whether the output is inside a call (its special tokens
// are then the call's text).
func (p *Parser) InCall() bool { return p.state == inCall }

// Write consumes the next piece of output and returns the events it completes.
func (p *Parser) Write(s string) []Event {
	p.pend += s
	return p.scan(false)
}

// Close ends the output: held text comes out, and an unclosed call comes
// out as a Call with Err.
func (p *Parser) Close() []Event {
	evs := p.scan(true)
	if p.state == inCall {
		evs = append(evs, p.failed(CallOpen+p.call.String(), errUnclosed))
		p.state = inText
	}
	return evs
}

// scan classifies as much of pend as it can; final: nothing more will come.
func (p *Parser) scan(final bool) []Event {
	var evs []Event
	for p.pend != "" && !p.done {
		if p.state == inCall {
			want := markers[:3] // open, close, quote
			if p.inString {
				want = []string{Quote}
			}
			i, m := nextMarker(p.pend, want)
			if i < 0 {
				n := len(p.pend)
				if !final {
					n -= partialSuffix(p.pend, want)
				}
				p.call.WriteString(p.pend[:n])
				p.pend = p.pend[n:]
				return evs
			}
			p.call.WriteString(p.pend[:i])
			p.pend = p.pend[i+len(m):]
			switch m {
			case Quote:
				p.call.WriteString(Quote)
				p.inString = !p.inString
			case CallClose:
				evs = append(evs, p.finish(p.call.String()))
				p.state = inText
			case CallOpen: // a new call before this one closed
				evs = append(evs, p.failed(CallOpen+p.call.String(), errUnclosed))
				p.call.Reset()
			}
			continue
		}
		if p.state == inThinking && p.trimThink {
			if !final && len(p.pend) < len(thought) && strings.HasPrefix(thought, p.pend) {
				return evs
			}
			p.pend = strings.TrimPrefix(p.pend, thought)
			p.trimThink = false
			continue
		}
		i, m := nextMarker(p.pend, markers)
		var text string
		if i >= 0 {
			text, p.pend = p.pend[:i], p.pend[i+len(m):]
		} else {
			n := len(p.pend)
			if !final {
				n -= partialSuffix(p.pend, markers)
			}
			text, p.pend = p.pend[:n], p.pend[n:]
		}
		if text != "" {
			kind := Text
			if p.state == inThinking {
				kind = Thinking
			}
			evs = append(evs, Event{Kind: kind, Text: text})
		}
		if i < 0 {
			return evs
		}
		switch m {
		case CallOpen:
			p.state, p.inString = inCall, false
			p.call.Reset()
		case ChannelOpen:
			p.state, p.trimThink = inThinking, true
		case ChannelClose:
			p.state = inText
		case ResponseOpen, "<turn|>", "<eos>":
			p.done = true
		}
	}
	return evs
}

// finish parses a closed call's text (what lay between the markers).
func (p *Parser) finish(body string) Event {
	name, args, err := ParseCall(body)
	if err != nil {
		ev := p.failed(CallOpen+body+CallClose, err)
		ev.Call.Name = name
		return ev
	}
	return Event{Kind: ToolCall, Call: Call{ID: p.id(), Name: name, Arguments: args, Raw: CallOpen + body + CallClose}}
}

func (p *Parser) failed(raw string, err error) Event {
	name := ""
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(raw, CallOpen), "call:"); ok {
		if i := strings.IndexByte(rest, '{'); i > 0 {
			name = strings.TrimSpace(rest[:i])
		}
	}
	return Event{Kind: ToolCall, Call: Call{ID: p.id(), Name: name, Raw: raw, Err: err}}
}

func (p *Parser) id() string {
	if p.NewID != nil {
		return p.NewID()
	}
	return NewID()
}

// NewID returns an OpenAI-style call id: "call_" and 24 random letters and digits.
func NewID() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return "call_" + string(b[:])
}

// nextMarker finds the first of markers in s.
func nextMarker(s string, markers []string) (int, string) {
	at, which := -1, ""
	for i := strings.IndexByte(s, '<'); i >= 0; {
		for _, m := range markers {
			if strings.HasPrefix(s[i:], m) {
				return i, m
			}
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return at, which
}

// partialSuffix is the length of the longest end of s that begins a marker.
func partialSuffix(s string, markers []string) int {
	for k := min(len(s), 15); k > 0; k-- {
		tail := s[len(s)-k:]
		if tail[0] != '<' {
			continue
		}
		for _, m := range markers {
			if len(m) > k && strings.HasPrefix(m, tail) {
				return k
			}
		}
	}
	return 0
}
