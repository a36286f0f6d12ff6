package chat

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"perch/app/history"
	"perch/app/mcphost"
	"perch/engine"
	"perch/ui"
)

// fakeTools is one server, "notes", with one tool, "read".
type fakeTools struct {
	mu    sync.Mutex
	calls []string      // arguments of each call run
	hang  bool          // calls wait for their context
	began chan struct{} // with hang: closed when a call begins
	allow *mcphost.AllowStore
}

func (f *fakeTools) Servers() []ui.ToolServer {
	return []ui.ToolServer{{Name: "notes", State: "ready"}, {Name: "idle", State: "ready"}}
}

func (f *fakeTools) Tools(_ context.Context, servers []string) []mcphost.Tool {
	var out []mcphost.Tool
	for _, s := range servers {
		if s == "notes" {
			out = append(out, mcphost.Tool{Server: "notes", Name: "read", Description: "Read a note",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
	}
	return out
}

func (f *fakeTools) Call(ctx context.Context, server, tool string, args json.RawMessage) mcphost.Result {
	if f.hang {
		close(f.began)
		<-ctx.Done()
		return mcphost.Result{Content: "cancelled", IsError: true}
	}
	f.mu.Lock()
	f.calls = append(f.calls, string(args))
	f.mu.Unlock()
	return mcphost.Result{Content: "[buy seeds](https://example.com)"}
}

func (f *fakeTools) Approvals() *mcphost.AllowStore { return f.allow }

func (f *fakeTools) ran() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.calls) }

var readCall = engine.ParsedCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"name":"garden"}`)}

func toolFixture(t *testing.T) (*fixture, *fakeTools) {
	t.Helper()
	eng := &fakeEngine{tokens: toks("It ", "says ", "buy seeds."), call: &readCall}
	f := newFixture(t, eng, e2b)
	allow, err := mcphost.OpenAllowStore(filepath.Join(t.TempDir(), "approvals.json"))
	if err != nil {
		t.Fatal(err)
	}
	tools := &fakeTools{allow: allow}
	f.svc.MCP = tools
	return f, tools
}

// respond follows an answer, answering each card that waits with decide,
// and returns the final answer and how many cards asked.
func respond(t *testing.T, r ui.Reply, decide func(ui.ToolCall) ui.ToolAnswer) (ui.Answer, int) {
	t.Helper()
	asked := 0
	ch := make(chan ui.Answer, 4096)
	var ui1 sync.Mutex // one "UI goroutine" at a time, as fyne.Do gives
	r.Stream.Follow(func(f func()) { ui1.Lock(); defer ui1.Unlock(); f() }, func(a ui.Answer) {
		for i, c := range a.Tools {
			if c.Waiting() && i == asked {
				asked++
				if d := decide(c); d >= 0 {
					c.Ask(d)
				}
			}
		}
		ch <- a
		if a.Done {
			close(ch)
		}
	})
	_, last := drainAnswers(t, ch)
	return last, asked
}

func answer(d ui.ToolAnswer) func(ui.ToolCall) ui.ToolAnswer {
	return func(ui.ToolCall) ui.ToolAnswer { return d }
}

// TestAllowOnceRunsTheCallAndTheModelSeesItAgain: a card asks, "allow
// once" runs the call, the result is saved folded in the answer, the
// answer follows, and the next request gives the model the call and its
// result as turns.
func TestAllowOnceRunsTheCallAndTheModelSeesItAgain(t *testing.T) {
	f, tools := toolFixture(t)
	r, err := f.svc.Send(context.Background(), "", "What do my garden notes say?", nil)
	if err != nil {
		t.Fatal(err)
	}
	var card ui.ToolCall
	last, asked := respond(t, r, func(c ui.ToolCall) ui.ToolAnswer { card = c; return ui.ToolAllowOnce })
	if asked != 1 || card.Server != "notes" || card.Tool != "read" || card.Arguments != `{"name":"garden"}` {
		t.Fatalf("cards asked %d, card %+v", asked, card)
	}
	if last.State != ui.Done || last.Text != "It says buy seeds." || len(last.Tools) != 1 || !last.Tools[0].Done ||
		last.Tools[0].Content != "[buy seeds](https://example.com)" || tools.ran() != 1 {
		t.Fatalf("final answer %+v, ran %d", last, tools.ran())
	}
	ms, err := f.svc.Messages(r.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if got := ms[1].Tools; len(got) != 1 || got[0].Content != "[buy seeds](https://example.com)" || got[0].Waiting() {
		t.Fatalf("reopened answer's calls %+v", got)
	}
	if f.svc.MCP.Approvals().Allowed("notes", "read") {
		t.Fatal("allow once was remembered")
	}

	r2, err := f.svc.Send(context.Background(), r.ConversationID, "Thanks", nil)
	if err != nil {
		t.Fatal(err)
	}
	respond(t, r2, answer(ui.ToolDeny))
	req := f.eng.requests[2] // the first answer took two requests
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant user" {
		t.Fatalf("the next request's turns: %s", got)
	}
	if c := req.Messages[1].ToolCalls; len(c) != 1 || c[0].Name != "read" || c[0].ID != req.Messages[2].ToolCallID ||
		req.Messages[2].Content[0].Text != "[buy seeds](https://example.com)" || req.Messages[3].Content[0].Text != "It says buy seeds." {
		t.Fatalf("tool turns sent again: %+v", req.Messages[1:4])
	}
}

// TestDenyRunsNothing: "deny" runs nothing; the model is told so and answers.
func TestDenyRunsNothing(t *testing.T) {
	f, tools := toolFixture(t)
	r, _ := f.svc.Send(context.Background(), "", "Read my notes", nil)
	last, asked := respond(t, r, answer(ui.ToolDeny))
	if asked != 1 || tools.ran() != 0 || len(last.Tools) != 1 || !last.Tools[0].Denied || last.State != ui.Done {
		t.Fatalf("asked %d, ran %d, final %+v", asked, tools.ran(), last)
	}
	ms, _ := f.store.Messages(r.ConversationID)
	if c := ms[1].Tools[0].Calls[0]; !c.Denied || !c.Done {
		t.Fatalf("stored %+v", c)
	}
}

// TestAlwaysAllowAsksOnceThenNotUntilRevoked.
func TestAlwaysAllowAsksOnceThenNotUntilRevoked(t *testing.T) {
	f, tools := toolFixture(t)
	r, _ := f.svc.Send(context.Background(), "", "Read my notes", nil)
	if _, asked := respond(t, r, answer(ui.ToolAllowAlways)); asked != 1 || tools.ran() != 1 {
		t.Fatalf("first: asked %d, ran %d", asked, tools.ran())
	}
	r, _ = f.svc.Send(context.Background(), r.ConversationID, "Again", nil)
	if _, asked := respond(t, r, answer(ui.ToolDeny)); asked != 0 || tools.ran() != 2 {
		t.Fatalf("after always: asked %d, ran %d", asked, tools.ran())
	}
	if err := tools.allow.Revoke("notes", "read"); err != nil {
		t.Fatal(err)
	}
	r, _ = f.svc.Send(context.Background(), r.ConversationID, "Again", nil)
	if _, asked := respond(t, r, answer(ui.ToolDeny)); asked != 1 || tools.ran() != 2 {
		t.Fatalf("after revoke: asked %d, ran %d", asked, tools.ran())
	}
}

// TestRoundLimitEndsWithAnAnswer: a model that calls every round stops
// calling after the setting's rounds and answers.
func TestRoundLimitEndsWithAnAnswer(t *testing.T) {
	f, tools := toolFixture(t)
	f.eng.callAlways = true
	f.set.ToolRounds = 3
	r, _ := f.svc.Send(context.Background(), "", "Read everything", nil)
	last, asked := respond(t, r, answer(ui.ToolAllowOnce))
	if asked != 3 || tools.ran() != 3 || len(last.Tools) != 3 || last.Text != "It says buy seeds." {
		t.Fatalf("asked %d, ran %d, %d calls, text %q", asked, tools.ran(), len(last.Tools), last.Text)
	}
	if req := f.eng.lastRequest(); req.ToolChoice.Mode != engine.ToolNone {
		t.Fatalf("the last round's tool choice %q", req.ToolChoice.Mode)
	}
}

// TestEscWhileACardWaits: stopping while a card waits ends the answer,
// runs nothing, and keeps the call on record as cut short.
func TestEscWhileACardWaits(t *testing.T) {
	f, tools := toolFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := f.svc.Send(ctx, "", "Read my notes", nil)
	last, asked := respond(t, r, func(ui.ToolCall) ui.ToolAnswer { cancel(); return -1 })
	if asked != 1 || tools.ran() != 0 || last.State != ui.Stopped {
		t.Fatalf("asked %d, ran %d, state %s", asked, tools.ran(), last.State)
	}
	ms, _ := f.store.Messages(r.ConversationID)
	if ms[1].State != history.Stopped || len(ms[1].Tools) != 1 || ms[1].Tools[0].Calls[0].Done {
		t.Fatalf("stored %+v", ms[1])
	}
	// The model is told the call did not finish.
	r2, _ := f.svc.Send(context.Background(), r.ConversationID, "Go on", nil)
	respond(t, r2, answer(ui.ToolDeny))
	if m := f.eng.requests[1].Messages[2]; m.Role != engine.RoleTool || m.Content[0].Text != notFinished {
		t.Fatalf("cut-short call sent as %+v", m)
	}
}

// TestEscWhileACallRuns: a hung tool ends with the answer when stopped.
func TestEscWhileACallRuns(t *testing.T) {
	f, tools := toolFixture(t)
	tools.hang, tools.began = true, make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := f.svc.Send(ctx, "", "Read my notes", nil)
	go func() {
		<-tools.began
		cancel()
	}()
	last, _ := respond(t, r, answer(ui.ToolAllowOnce))
	if last.State != ui.Stopped || len(last.Tools) != 1 || last.Tools[0].Done {
		t.Fatalf("state %s, calls %+v", last.State, last.Tools)
	}
}

// TestPerConversationServers: a conversation offers only the servers
// switched on for it; a new chat's choice made before it exists is kept.
func TestPerConversationServers(t *testing.T) {
	f, tools := toolFixture(t)
	if err := f.svc.SetToolServer("", "notes", false); err != nil {
		t.Fatal(err)
	}
	r, _ := f.svc.Send(context.Background(), "", "Hello", nil)
	last, asked := respond(t, r, answer(ui.ToolDeny))
	if asked != 0 || len(f.eng.lastRequest().Tools) != 0 || last.Text != "It says buy seeds." {
		t.Fatalf("with notes off: asked %d, tools %d", asked, len(f.eng.lastRequest().Tools))
	}
	got, _ := f.svc.ToolServers(r.ConversationID)
	if len(got) != 2 || got[0].On || !got[1].On {
		t.Fatalf("servers of the conversation: %+v", got)
	}
	if got, _ := f.svc.ToolServers(""); !got[0].On {
		t.Fatal("the choice stuck to the next new chat too")
	}
	if err := f.svc.SetToolServer(r.ConversationID, "notes", true); err != nil {
		t.Fatal(err)
	}
	r, _ = f.svc.Send(context.Background(), r.ConversationID, "Read my notes", nil)
	if _, asked := respond(t, r, answer(ui.ToolAllowOnce)); asked != 1 || tools.ran() != 1 {
		t.Fatalf("with notes on: asked %d, ran %d", asked, tools.ran())
	}
}
