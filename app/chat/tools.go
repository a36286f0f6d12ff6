package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"perch/app/history"
	"perch/app/mcphost"
	"perch/app/toolloop"
	"perch/engine"
	"perch/ui"
)

// ToolSource is the user's MCP servers as answers use them (app/desktop's
// tool set is one).
type ToolSource interface {
	// Servers lists the enabled servers, in order, with their states.
	Servers() []ui.ToolServer
	// Tools lists the named servers' tools, starting them if needed; a
	// server that fails is left out (its state says why).
	Tools(ctx context.Context, servers []string) []mcphost.Tool
	toolloop.Caller
	// Approvals are the user's "always allow" choices.
	Approvals() *mcphost.AllowStore
}

var _ ui.ToolChats = (*Service)(nil)

// toolChoice is the servers chosen for the next new conversation (nil:
// every enabled one).
type toolChoice struct {
	mu   sync.Mutex
	next []string
	set  bool
}

// ToolServers lists the enabled servers and whether conversation convID
// ("" the next new one) offers their tools; a conversation that never
// chose offers every enabled server's.
func (s *Service) ToolServers(convID string) ([]ui.ToolServer, error) {
	if s.MCP == nil {
		return nil, nil
	}
	chosen, ok, err := s.chosenServers(convID)
	if err != nil {
		return nil, err
	}
	out := s.MCP.Servers()
	for i := range out {
		out[i].On = !ok || slices.Contains(chosen, out[i].Name)
	}
	return out, nil
}

func (s *Service) chosenServers(convID string) ([]string, bool, error) {
	if convID == "" {
		s.tools.mu.Lock()
		defer s.tools.mu.Unlock()
		return s.tools.next, s.tools.set, nil
	}
	return s.store.ToolServers(convID)
}

// SetToolServer turns a server's tools on or off for conversation convID
// ("" the next new one).
func (s *Service) SetToolServer(convID, server string, on bool) error {
	servers, err := s.ToolServers(convID)
	if err != nil {
		return err
	}
	chosen := []string{}
	for _, sv := range servers {
		if (sv.Name == server && on) || (sv.Name != server && sv.On) {
			chosen = append(chosen, sv.Name)
		}
	}
	if convID == "" {
		s.tools.mu.Lock()
		s.tools.next, s.tools.set = chosen, true
		s.tools.mu.Unlock()
		return nil
	}
	return s.store.SetToolServers(convID, chosen)
}

// takeNextChoice gives a conversation just made the choice made for it
// before it existed.
func (s *Service) takeNextChoice(convID string) error {
	s.tools.mu.Lock()
	next, set := s.tools.next, s.tools.set
	s.tools.next, s.tools.set = nil, false
	s.tools.mu.Unlock()
	if !set {
		return nil
	}
	return s.store.SetToolServers(convID, next)
}

// offered is what conversation convID offers the model: the tools of its
// servers that are enabled (nil: none, or no tools at all).
func (s *Service) offered(ctx context.Context, convID string, status func(string)) []toolloop.Offered {
	if s.MCP == nil {
		return nil
	}
	servers, err := s.ToolServers(convID)
	if err != nil {
		return nil
	}
	var on []string
	for _, sv := range servers {
		if sv.On {
			on = append(on, sv.Name)
		}
	}
	if len(on) == 0 {
		return nil
	}
	status("Starting tools…")
	constrained := s.ToolChoice.Mode == engine.ToolRequired || s.ToolChoice.Mode == engine.ToolFunction
	offered, _ := toolloop.Offer(s.MCP.Tools(ctx, on), constrained)
	return offered
}

// toolsToUI turns stored rounds into the chat's cards.
func toolsToUI(rounds []history.ToolRound) []ui.ToolCall {
	var out []ui.ToolCall
	for _, r := range rounds {
		for i, c := range r.Calls {
			u := ui.ToolCall{Name: c.Name, Server: c.Server, Tool: c.Tool, Arguments: string(c.Arguments),
				Content: c.Content, IsError: c.IsError, Denied: c.Denied, Done: c.Done}
			if i == 0 {
				u.Lead = r.Text
			}
			out = append(out, u)
		}
	}
	return out
}

// notFinished is what the model is told of a call that was cut short.
const notFinished = "the call did not finish (stopped by the user, or Perch quit)"

// toolTurns are a stored answer's rounds as the model sees them again:
// per round an assistant turn with its text and calls, then a tool turn
// per call with its result.
func toolTurns(rounds []history.ToolRound) []engine.Message {
	var out []engine.Message
	for r, round := range rounds {
		turn := engine.Message{Role: engine.RoleAssistant}
		if round.Text != "" {
			turn.Content = []engine.Part{{Type: engine.PartText, Text: round.Text}}
		}
		var results []engine.Message
		for i, c := range round.Calls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", r, i)
			}
			args := c.Arguments
			if !json.Valid(args) || len(args) == 0 || args[0] != '{' {
				args = json.RawMessage(`{}`)
			}
			turn.ToolCalls = append(turn.ToolCalls, engine.ToolCall{ID: id, Name: c.Name, Arguments: args})
			content := c.Content
			if !c.Done {
				content = notFinished
			}
			results = append(results, engine.Message{Role: engine.RoleTool, ToolCallID: id, ToolName: c.Name,
				Content: []engine.Part{{Type: engine.PartText, Text: content}}})
		}
		if len(turn.ToolCalls) == 0 {
			continue
		}
		out = append(append(out, turn), results...)
	}
	return out
}

// toolRun is the state of an answer that may call tools: its rounds so
// far, saved with the answer, and the card waiting for the user.
type toolRun struct {
	a        *history.Message
	text     strings.Builder // this round's answer so far
	thinking strings.Builder
	round    int
	ask      func(ui.ToolAnswer) // the waiting card's answer (nil: none waits)
}

// calls is the rounds as cards, with the waiting one's answer.
func (t *toolRun) calls() []ui.ToolCall {
	out := toolsToUI(t.a.Tools)
	if t.ask != nil && len(out) > 0 {
		out[len(out)-1].Ask = t.ask
	}
	return out
}

// call records a call the model made (before it is approved or runs).
func (t *toolRun) call(ev toolloop.Event) {
	if len(t.a.Tools) == 0 || ev.Round != t.round {
		t.a.Tools = append(t.a.Tools, history.ToolRound{Text: strings.TrimSpace(t.text.String())})
		t.round = ev.Round
		t.text.Reset()
	}
	r := &t.a.Tools[len(t.a.Tools)-1]
	r.Calls = append(r.Calls, history.ToolCall{ID: ev.ID, Name: ev.Name, Server: ev.Server, Tool: ev.Tool, Arguments: ev.Arguments})
}

// result records the last call's outcome.
func (t *toolRun) result(ev toolloop.Event) {
	if len(t.a.Tools) == 0 {
		return
	}
	r := &t.a.Tools[len(t.a.Tools)-1]
	if len(r.Calls) == 0 {
		return
	}
	c := &r.Calls[len(r.Calls)-1]
	c.Content, c.IsError, c.Denied, c.Done = ev.Content, ev.IsError, ev.Denied, true
}

// decision maps a card's answer to the gate's.
func decision(a ui.ToolAnswer) mcphost.Decision {
	switch a {
	case ui.ToolAllowOnce:
		return mcphost.AllowOnce
	case ui.ToolAllowAlways:
		return mcphost.AllowAlways
	}
	return mcphost.Deny
}
