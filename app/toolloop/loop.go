package toolloop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"perch/app/mcphost"
	"perch/engine"
)

// DefaultMaxRounds is how many rounds of tool calls one answer may take.
const DefaultMaxRounds = 8

// Caller runs a call on a server (*mcphost.Host is one).
type Caller interface {
	Call(ctx context.Context, server, tool string, args json.RawMessage) mcphost.Result
}

// Approver decides whether a call may run (*mcphost.Gate is one).
type Approver interface {
	Approve(ctx context.Context, r mcphost.Request) (bool, error)
}

// EventKind says what an Event carries.
type EventKind int

const (
	Generation EventKind = iota // Engine: a generation event (tokens, done), passed through
	Call                        // a call the model made, before approval
	Result                      // its outcome
)

// Event is one step of the loop, for the front end to show.
type Event struct {
	Kind   EventKind
	Round  int
	Engine engine.Event
	// Call and Result:
	ID           string // the call's id (the tool turn answering it carries it)
	Server, Tool string // the MCP server and tool ("" when the model named no offered tool)
	Name         string // the name the model used
	Arguments    json.RawMessage
	// Result:
	Content string
	IsError bool
	Denied  bool
}

// Loop is one answer that may call tools.
type Loop struct {
	Gen       engine.Generator
	Tools     []Offered
	Host      Caller
	Gate      Approver
	MaxRounds int         // 0: DefaultMaxRounds
	OnEvent   func(Event) // may be nil
}

// Outcome is what the answer added to the conversation: the assistant
// turns with their calls, the tool turns, and the final answer's turn.
type Outcome struct {
	Messages   []engine.Message
	Answer     string
	Rounds     int  // rounds that called tools
	RoundLimit bool // the model still called tools when the limit was reached
}

// Run answers req (its Messages, settings and ToolChoice; its Tools are
// replaced by l.Tools). The tool choice holds for the first round only;
// later rounds are "auto", and the round after the limit is "none", so
// that an answer follows. Cancelling ctx stops it at any point.
func (l *Loop) Run(ctx context.Context, req engine.Request) (Outcome, error) {
	var out Outcome
	maxRounds := l.MaxRounds
	if maxRounds <= 0 {
		maxRounds = DefaultMaxRounds
	}
	byName := map[string]Offered{}
	req.Tools = nil
	for _, o := range l.Tools {
		byName[o.Engine.Name] = o
		req.Tools = append(req.Tools, o.Engine)
	}
	if len(req.Tools) == 0 {
		req.ToolChoice = engine.ToolChoice{}
	}
	msgs := append([]engine.Message(nil), req.Messages...)
	for round := 0; ; round++ {
		r := req
		r.Messages = msgs
		if round > 0 && len(r.Tools) > 0 {
			r.ToolChoice = engine.ToolChoice{}
		}
		if round == maxRounds {
			r.ToolChoice = engine.ToolChoice{Mode: engine.ToolNone}
		}
		text, calls, err := l.generate(ctx, r, round)
		if err != nil {
			return out, err
		}
		if len(calls) == 0 || round == maxRounds {
			out.RoundLimit = len(calls) > 0
			out.Answer = text
			out.Messages = append(out.Messages, engine.Text(engine.RoleAssistant, text))
			return out, nil
		}
		out.Rounds++
		turn := engine.Message{Role: engine.RoleAssistant}
		if text != "" {
			turn.Content = []engine.Part{{Type: engine.PartText, Text: text}}
		}
		var results []engine.Message
		for i, c := range calls {
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d_%d", round, i)
			}
			args := c.Arguments
			if c.Err != nil || len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			turn.ToolCalls = append(turn.ToolCalls, engine.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
			ev, err := l.run(ctx, round, c, byName)
			if err != nil {
				return out, err
			}
			results = append(results, engine.Message{Role: engine.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
				Content: []engine.Part{{Type: engine.PartText, Text: ev.Content}}})
		}
		msgs = append(append(msgs, turn), results...)
		out.Messages = append(append(out.Messages, turn), results...)
	}
}

// generate runs one round and returns its answer text and calls.
func (l *Loop) generate(ctx context.Context, r engine.Request, round int) (string, []engine.ParsedCall, error) {
	events, err := l.Gen.Generate(ctx, r)
	if err != nil {
		return "", nil, err
	}
	var text strings.Builder
	var calls []engine.ParsedCall
	var genErr error
	for ev := range events {
		switch ev.Kind {
		case engine.EventToken:
			if !ev.Token.Thinking {
				text.WriteString(ev.Token.Text)
			}
		case engine.EventToolCall:
			calls = append(calls, ev.Call)
			continue // the loop reports the call itself
		case engine.EventError:
			genErr = ev.Err
		}
		l.emit(Event{Kind: Generation, Round: round, Engine: ev})
	}
	if genErr == nil && ctx.Err() != nil {
		genErr = ctx.Err()
	}
	return text.String(), calls, genErr
}

// run approves and runs one call; the event it returns holds the text
// the model gets back.
func (l *Loop) run(ctx context.Context, round int, c engine.ParsedCall, byName map[string]Offered) (Event, error) {
	o, known := byName[c.Name]
	ev := Event{Kind: Call, Round: round, ID: c.ID, Server: o.Server, Tool: o.Tool, Name: c.Name, Arguments: c.Arguments}
	l.emit(ev)
	ev.Kind = Result
	switch {
	case c.Err != nil:
		ev.Content, ev.IsError = fmt.Sprintf("the call could not be read: %v", c.Err), true
	case !known:
		ev.Content, ev.IsError = fmt.Sprintf("there is no tool named %q", c.Name), true
	default:
		ok, err := l.Gate.Approve(ctx, mcphost.Request{Server: o.Server, Tool: o.Tool, Arguments: c.Arguments})
		if ctx.Err() != nil {
			return ev, ctx.Err()
		}
		switch {
		case err != nil && !ok:
			return ev, err
		case !ok:
			ev.Content, ev.Denied = "denied: the user did not allow this call", true
		default:
			r := l.Host.Call(ctx, o.Server, o.Tool, c.Arguments)
			if ctx.Err() != nil {
				return ev, ctx.Err()
			}
			ev.Content, ev.IsError = r.Content, r.IsError
		}
	}
	l.emit(ev)
	return ev, nil
}

func (l *Loop) emit(ev Event) {
	if l.OnEvent != nil {
		l.OnEvent(ev)
	}
}
