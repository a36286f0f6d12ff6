package toolloop

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"perch/app/mcphost"
	"perch/engine"
)

// window answers each card with the next decision and counts the cards.
func window(p *mcphost.Prompter, answers ...mcphost.Decision) (shown chan mcphost.Request) {
	shown = make(chan mcphost.Request, 16)
	go func() {
		for i := 0; ; i++ {
			c, ok := <-p.Cards()
			if !ok {
				return
			}
			shown <- c.Request
			if i < len(answers) {
				c.Answer(answers[i])
			}
		}
	}()
	return shown
}

func cardLoop(t *testing.T, gate *mcphost.Gate, rounds int) (*countingHost, Outcome, error) {
	host := &countingHost{}
	l := &Loop{Gen: &scripted{script: []string{"call"}}, Tools: echoTool, Host: host, Gate: gate, MaxRounds: rounds}
	out, err := l.Run(context.Background(), engine.Request{Messages: []engine.Message{engine.Text(engine.RoleUser, "x")}})
	return host, out, err
}

// TestCardsApproveDenyAlwaysRevoke: through the window's cards, "allow
// once" runs one call, "deny" runs none, "always" runs this and every
// later call without a card, until revoked.
func TestCardsApproveDenyAlwaysRevoke(t *testing.T) {
	store, _ := mcphost.OpenAllowStore(filepath.Join(t.TempDir(), "approvals.json"))
	p := mcphost.NewPrompter()
	gate := &mcphost.Gate{Policy: mcphost.Ask, Store: store, Ask: p.Ask}

	shown := window(p, mcphost.AllowOnce, mcphost.Deny, mcphost.AllowAlways)
	host, out, err := cardLoop(t, gate, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != 3 || len(host.calls) != 2 || !out.RoundLimit {
		t.Fatalf("once, deny, always: %d cards, %d calls", len(shown), len(host.calls))
	}
	if r := <-shown; r.Server != "go" || r.Tool != "echo" || string(r.Arguments) != `{"text":"hi"}` {
		t.Fatalf("card %+v", r)
	}
	if !store.Allowed("go", "echo") {
		t.Fatal("always was not stored")
	}
	host, _, _ = cardLoop(t, gate, 4)
	if len(host.calls) != 4 || len(shown) != 2 {
		t.Fatalf("after always: %d calls, %d new cards (want 4, 0)", len(host.calls), len(shown)-2)
	}
	if err := store.Revoke("go", "echo"); err != nil {
		t.Fatal(err)
	}
	for len(shown) > 0 {
		<-shown
	}
	p2 := mcphost.NewPrompter()
	gate.Ask = p2.Ask
	shown = window(p2, mcphost.Deny, mcphost.Deny)
	host, _, _ = cardLoop(t, gate, 2)
	if len(host.calls) != 0 || len(shown) != 2 {
		t.Fatalf("after revoke: %d calls, %d cards (want 0, 2)", len(host.calls), len(shown))
	}
}

// TestEscWhileACardWaits: cancelling (Esc) while a card waits ends the
// answer at once and runs nothing.
func TestEscWhileACardWaits(t *testing.T) {
	p := mcphost.NewPrompter()
	shown := window(p) // shows cards, never answers
	host := &countingHost{}
	l := &Loop{Gen: &scripted{script: []string{"call"}}, Tools: echoTool, Host: host,
		Gate: &mcphost.Gate{Policy: mcphost.Ask, Ask: p.Ask}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Run(ctx, engine.Request{Messages: []engine.Message{engine.Text(engine.RoleUser, "x")}})
		done <- err
	}()
	<-shown
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled || len(host.calls) != 0 {
			t.Fatalf("err %v, calls %d", err, len(host.calls))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Esc did not end the answer within 5s")
	}
}
