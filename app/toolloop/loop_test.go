package toolloop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"perch/app/mcphost"
	"perch/engine"
)

// scripted answers each Generate with the next script entry: a call of
// echo when the entry starts with "call", the entry as text otherwise.
type scripted struct {
	mu     sync.Mutex
	script []string
	reqs   []engine.Request
}

func (s *scripted) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	s.mu.Lock()
	step := s.script[min(len(s.reqs), len(s.script)-1)]
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	ch := make(chan engine.Event, 4)
	if strings.HasPrefix(step, "call") {
		ch <- engine.Event{Kind: engine.EventToolCall, Call: engine.ParsedCall{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)}}
		ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopToolCalls}
	} else {
		ch <- engine.Event{Kind: engine.EventToken, Token: engine.Token{ID: 1, Text: step}}
		ch <- engine.Event{Kind: engine.EventDone, StopReason: engine.StopEOS}
	}
	close(ch)
	return ch, nil
}

type countingHost struct{ calls []string }

func (h *countingHost) Call(ctx context.Context, server, tool string, args json.RawMessage) mcphost.Result {
	h.calls = append(h.calls, server+"/"+tool+" "+string(args))
	return mcphost.Result{Content: "echo: hi"}
}

var echoTool = []Offered{{Server: "go", Tool: "echo", Engine: engine.Tool{Name: "echo", Parameters: []byte(`{"type":"object"}`)}}}

func run(t *testing.T, script []string, gate Approver, rounds int) (*scripted, *countingHost, Outcome, []Event, error) {
	gen := &scripted{script: script}
	host := &countingHost{}
	var events []Event
	l := &Loop{Gen: gen, Tools: echoTool, Host: host, Gate: gate, MaxRounds: rounds,
		OnEvent: func(ev Event) { events = append(events, ev) }}
	req := engine.Request{Messages: []engine.Message{engine.Text(engine.RoleUser, "say hi")},
		ToolChoice: engine.ToolChoice{Mode: engine.ToolRequired}}
	out, err := l.Run(context.Background(), req)
	return gen, host, out, events, err
}

func TestCallResultAnswer(t *testing.T) {
	gen, host, out, events, err := run(t, []string{"call", "It said hi."}, &mcphost.Gate{Policy: mcphost.AllowAll}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(host.calls) != 1 || host.calls[0] != `go/echo {"text":"hi"}` {
		t.Fatalf("host calls %q", host.calls)
	}
	if out.Answer != "It said hi." || out.Rounds != 1 || len(out.Messages) != 3 {
		t.Fatalf("outcome %+v", out)
	}
	call, result := out.Messages[0], out.Messages[1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "c1" || result.Role != engine.RoleTool || result.ToolCallID != "c1" || result.Content[0].Text != "echo: hi" {
		t.Fatalf("turns %+v %+v", call, result)
	}
	if len(gen.reqs) != 2 || gen.reqs[0].ToolChoice.Mode != engine.ToolRequired || gen.reqs[1].ToolChoice.Mode != engine.ToolAuto || len(gen.reqs[1].Messages) != 3 {
		t.Fatalf("requests: %d, choices %q %q", len(gen.reqs), gen.reqs[0].ToolChoice.Mode, gen.reqs[len(gen.reqs)-1].ToolChoice.Mode)
	}
	var kinds []EventKind
	for _, ev := range events {
		if ev.Kind != Generation {
			kinds = append(kinds, ev.Kind)
		}
	}
	if len(kinds) != 2 || kinds[0] != Call || kinds[1] != Result {
		t.Fatalf("events %v", kinds)
	}
}

func TestDeniedCallRunsNothing(t *testing.T) {
	_, host, out, events, err := run(t, []string{"call", "ok"}, &mcphost.Gate{Policy: mcphost.DenyAll}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(host.calls) != 0 {
		t.Fatalf("denied call ran: %q", host.calls)
	}
	if !strings.HasPrefix(out.Messages[1].Content[0].Text, "denied") {
		t.Fatalf("the model was told %q", out.Messages[1].Content[0].Text)
	}
	last := events[len(events)-3] // result, then the answer's token and done
	if last.Kind != Result || !last.Denied || last.IsError {
		t.Fatalf("result event %+v", last)
	}
}

func TestRoundLimit(t *testing.T) {
	gen, host, out, _, err := run(t, []string{"call"}, &mcphost.Gate{Policy: mcphost.AllowAll}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(host.calls) != 3 || out.Rounds != 3 || !out.RoundLimit || len(gen.reqs) != 4 || gen.reqs[3].ToolChoice.Mode != engine.ToolNone {
		t.Fatalf("calls %d, rounds %d, limit %v, requests %d", len(host.calls), out.Rounds, out.RoundLimit, len(gen.reqs))
	}
}

// askThenCancel is a user who presses Esc while asked.
type askThenCancel struct{ cancel context.CancelFunc }

func (a askThenCancel) Approve(ctx context.Context, r mcphost.Request) (bool, error) {
	a.cancel()
	<-ctx.Done()
	return false, ctx.Err()
}

func TestCancelWhileAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	host := &countingHost{}
	l := &Loop{Gen: &scripted{script: []string{"call", "never"}}, Tools: echoTool, Host: host, Gate: askThenCancel{cancel}}
	_, err := l.Run(ctx, engine.Request{Messages: []engine.Message{engine.Text(engine.RoleUser, "x")}})
	if err != context.Canceled || len(host.calls) != 0 {
		t.Fatalf("err %v, calls %q", err, host.calls)
	}
}

func TestOffer(t *testing.T) {
	tools := []mcphost.Tool{
		{Server: "a", Name: "echo", InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Server: "b", Name: "echo", InputSchema: []byte(`{"type":"object"}`)},
		{Server: "b", Name: "read file", InputSchema: []byte(`{"type":"object"}`)},
		{Server: "b", Name: "half", InputSchema: []byte(`{"type":"object","properties":{"x":{"type":"number","multipleOf":0.5}}}`)},
		{Server: "b", Name: "list", InputSchema: []byte(`[1]`)},
	}
	offered, skipped := Offer(tools, true)
	var names []string
	for _, o := range offered {
		names = append(names, o.Engine.Name)
	}
	if strings.Join(names, ",") != "echo,b_echo,b_read_file" {
		t.Fatalf("offered %q", names)
	}
	if len(skipped) != 2 || skipped[0].Tool != "half" || !strings.Contains(skipped[0].Reason, "multipleOf") || skipped[1].Tool != "list" {
		t.Fatalf("skipped %+v", skipped)
	}
	if offered, _ := Offer(tools, false); len(offered) != 4 {
		t.Fatalf("unconstrained: %d offered, want 4 (half too)", len(offered))
	}
}
