// Package contextfit keeps a conversation within a model's context. When it
// no longer fits, the system prompt and the newest turns stay; the
// attachments of older turns go first (a short note takes their place), then
// whole older turns, oldest first. The newest user turn and what follows
// it (an answer's rounds of tool calls and results, in progress) always
// stay, so a call and its result leave or stay together. Cuts move in steps of a quarter of the
// context, so that consecutive requests keep the same start, their prompts
// share a prefix, and the engine's prefix cache stays useful.
package contextfit

import (
	"context"
	"fmt"
	"strings"

	"perch/engine"
)

// Measurer counts a request's prompt as the engine would build it
// (*engine.Engine implements it).
type Measurer interface {
	Measure(ctx context.Context, req engine.Request) (engine.Measure, error)
}

// Cut says what of a conversation is sent. Messages before From are left
// out; those before MediaFrom go without their attachments. Both index the
// conversation's messages (the request's messages after its system ones).
type Cut struct{ From, MediaFrom int }

// Trimmed reports whether anything is left out.
func (c Cut) Trimmed() bool { return c.From > 0 || c.MediaFrom > 0 }

// TooLongError says that even the newest message alone does not fit.
type TooLongError struct{ Tokens, Limit int }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("your message alone is %d tokens and the model reads at most %d with room to answer: shorten it or attach less", e.Tokens, e.Limit)
}

// Limit is how many prompt tokens a request may take in a context of n
// tokens: what is left after room for an answer of maxTokens (0: the
// engine's default), the room being at most a quarter of the context.
func Limit(n, maxTokens int) int {
	room := n / 4
	if maxTokens > 0 && maxTokens < room {
		room = maxTokens
	}
	return n - room
}

// placeholderCost is what the note standing in for a left-out attachment
// may cost in tokens.
const placeholderCost = 16

// Policy is Perch's context policy as the engine applies it inside the
// one Prepare of a request (engine.ContextPolicy): it leaves out as little
// as keeps the prompt within Limit, never starting before the cut it was
// made with (the previous answer's, so a conversation's start moves only
// forward). Cut says where it ended. One request, one Policy.
type Policy struct {
	req   engine.Request // the whole conversation
	sys   int            // leading system messages
	conv  []engine.Message
	cut   Cut
	tries int
}

// NewPolicy returns the policy for req starting at start, and req with
// that cut applied and the policy set (req.Fit): what to hand Generate.
func NewPolicy(req engine.Request, start Cut) (*Policy, engine.Request) {
	p := &Policy{req: req}
	for p.sys < len(req.Messages) && req.Messages[p.sys].Role == engine.RoleSystem {
		p.sys++
	}
	p.conv = req.Messages[p.sys:]
	if len(p.conv) > 0 {
		p.cut = clamp(start, p.conv)
	}
	out := Apply(req, p.sys, p.cut)
	out.Fit = p
	return p, out
}

// Cut is what the request leaves out, as far as the policy has gone.
func (p *Policy) Cut() Cut { return p.cut }

// Fit implements engine.ContextPolicy.
func (p *Policy) Fit(_ []engine.Message, meas engine.Measure) ([]engine.Message, bool, error) {
	if len(p.conv) == 0 {
		return nil, true, nil
	}
	limit := Limit(meas.Context, p.req.MaxTokens)
	if meas.Tokens <= limit {
		return nil, true, nil
	}
	next := advance(p.cut, p.conv, sizes(meas, p.sys, p.cut, len(p.conv)), meas.Tokens-limit, max(1, meas.Context/4))
	if next == p.cut || p.tries > 3*len(p.conv) {
		return nil, false, &TooLongError{Tokens: meas.Tokens, Limit: limit}
	}
	p.tries++
	p.cut = next
	return Apply(p.req, p.sys, next).Messages, false, nil
}

// Fit is the policy with a Measurer instead of the engine's Prepare: req
// with as little left out as keeps its prompt within Limit, never starting
// before start; the returned measure is that of the request returned.
func Fit(ctx context.Context, m Measurer, req engine.Request, start Cut) (engine.Request, Cut, engine.Measure, error) {
	p, r := NewPolicy(req, start)
	r.Fit = nil
	for {
		meas, err := m.Measure(ctx, r)
		if err != nil {
			return r, p.cut, meas, err
		}
		next, done, err := p.Fit(r.Messages, meas)
		if done || err != nil {
			return r, p.cut, meas, err
		}
		r.Messages = next
	}
}

// newest is the index of the first message that never leaves: the newest
// user turn (the answer being made, with its tool calls and their
// results, follows it), or the first message when no turn is the user's.
func newest(conv []engine.Message) int {
	n := len(conv) - 1
	for n > 0 && conv[n].Role != engine.RoleUser {
		n--
	}
	return n
}

// clamp keeps a cut inside the conversation, starting at a user turn.
func clamp(c Cut, conv []engine.Message) Cut {
	last := newest(conv)
	c.From = min(max(c.From, 0), last)
	for c.From > 0 && conv[c.From].Role != engine.RoleUser {
		c.From--
	}
	c.MediaFrom = min(max(c.MediaFrom, c.From), last)
	return c
}

// sizes lines the measured message sizes up with the conversation's
// indexes (nil where unknown).
func sizes(meas engine.Measure, sys int, cut Cut, n int) []engine.MessageSize {
	if len(meas.Messages) != sys+n-cut.From {
		return nil
	}
	out := make([]engine.MessageSize, n)
	copy(out[cut.From:], meas.Messages[sys:])
	return out
}

// mediaLead is how far (in messages) attachments leave ahead of text: a
// turn's text goes once the attachments of the four turns after it have gone.
const mediaLead = 8

// step is one thing that can leave a request: a message's attachments, or
// the message itself.
type step struct {
	msg   int
	media bool
}

// order lists the steps in the order they go, oldest first, attachments
// leading text by mediaLead messages. The newest user turn and what
// follows never go. Old steps keep their places as the conversation
// grows, so the same need gives the same cut.
func order(conv []engine.Message) []step {
	last := newest(conv)
	var out []step
	for i := 0; i < last; i++ {
		if hasMedia(conv[i]) {
			out = append(out, step{i, true})
		}
		if j := i - mediaLead; j >= 0 {
			out = append(out, step{j, false})
		}
	}
	for j := max(0, last-mediaLead); j < last; j++ {
		out = append(out, step{j, false})
	}
	return out
}

// covered reports whether cut c already leaves step s out.
func (c Cut) covered(s step) bool {
	if s.media {
		return s.msg < c.MediaFrom || s.msg < c.From
	}
	return s.msg < c.From
}

// advance moves the cut on along order to shed at least over tokens,
// rounded up to whole steps of the context; without sizes, by one step.
func advance(c Cut, conv []engine.Message, size []engine.MessageSize, over, quantum int) Cut {
	steps := order(conv)
	p := 0 // steps before p are out
	for i, s := range steps {
		if c.covered(s) {
			p = i + 1
		}
	}
	need := (over + quantum - 1) / quantum * quantum
	if size == nil {
		need = 1
	}
	for saved := 0; p < len(steps) && saved < need; p++ {
		s := steps[p]
		switch {
		case size == nil:
			saved++
		case s.media:
			saved += max(0, size[s.msg].Media-placeholderCost)
		default:
			saved += size[s.msg].Tokens - size[s.msg].Media
		}
	}
	for _, s := range steps[:p] {
		if s.media {
			c.MediaFrom = max(c.MediaFrom, s.msg+1)
		} else {
			c.From = max(c.From, s.msg+1)
		}
	}
	last := newest(conv)
	for c.From < last && conv[c.From].Role != engine.RoleUser {
		c.From++ // a kept conversation starts with a user turn
	}
	c.MediaFrom = max(c.MediaFrom, c.From)
	return c
}

func hasMedia(m engine.Message) bool {
	for _, p := range m.Content {
		if p.Type != engine.PartText {
			return true
		}
	}
	return false
}

// Apply returns req with cut applied to the conversation after its first
// sys (system) messages; req itself is not changed.
func Apply(req engine.Request, sys int, cut Cut) engine.Request {
	msgs := append([]engine.Message(nil), req.Messages[:sys]...)
	for i, m := range req.Messages[sys:] {
		switch {
		case i < cut.From:
			continue
		case i < cut.MediaFrom && hasMedia(m):
			m = withoutMedia(m)
		}
		msgs = append(msgs, m)
	}
	req.Messages = msgs
	return req
}

// withoutMedia replaces a message's attachments with one line naming them.
func withoutMedia(m engine.Message) engine.Message {
	var notes, texts []string
	for _, p := range m.Content {
		if p.Type == engine.PartText {
			texts = append(texts, p.Text)
			continue
		}
		what := map[engine.PartType]string{engine.PartImage: "photo", engine.PartAudio: "recording", engine.PartVideo: "video"}[p.Type]
		if what == "" {
			what = "attachment"
		}
		if p.Name != "" {
			what += " " + p.Name
		}
		notes = append(notes, what)
	}
	text := "[" + strings.Join(notes, ", ") + ": no longer shown]"
	if len(texts) > 0 {
		text += "\n" + strings.Join(texts, "\n")
	}
	m.Content = []engine.Part{{Type: engine.PartText, Text: text}}
	return m // its calls (or the call it answers) stay
}
