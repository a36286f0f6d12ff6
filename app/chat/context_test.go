package chat

import (
	"context"
	"errors"
	"testing"

	"perch/engine"
	"perch/ui"
)

// measuringEngine is a fake whose prompts cost 1000 tokens a message in a
// 4096-token context: more than four messages do not fit at all.
type measuringEngine struct{ *fakeEngine }

func (m measuringEngine) Measure(_ context.Context, req engine.Request) (engine.Measure, error) {
	out := engine.Measure{Context: 4096, Tokens: 1000 * len(req.Messages)}
	for range req.Messages {
		out.Messages = append(out.Messages, engine.MessageSize{Tokens: 1000})
	}
	return out, nil
}

func (m measuringEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	req, err := fitRequest(req, func(r engine.Request) engine.Measure { out, _ := m.Measure(ctx, r); return out })
	if err != nil {
		if req.OnDone != nil {
			req.OnDone()
		}
		return nil, err
	}
	req.Fit = nil // fitted here: the fake engine below sends it as is
	if n := len(req.Messages); n > 4 {
		m.fakeEngine.mu.Lock()
		m.fakeEngine.requests = append(m.fakeEngine.requests, req)
		m.fakeEngine.mu.Unlock()
		return nil, &engine.ContextError{Prompt: 1000 * n, Context: 4096}
	}
	return m.fakeEngine.Generate(ctx, req)
}

func newMeasuringFixture(t *testing.T, policy string) (*fixture, *fakeEngine) {
	eng := &fakeEngine{tokens: toks("ok")}
	f := newFixture(t, eng, e2b)
	f.set.ContextPolicy = policy
	rt := NewRuntime(func(string) (Located, error) { return e2b, nil },
		func(string) (Engine, engine.ModelInfo, error) {
			return measuringEngine{eng}, engine.ModelInfo{Name: "Gemma-4 E2B"}, nil
		}, nil)
	rt.Select("e2b")
	f.svc.models = rt
	return f, eng
}

// streamView follows r to its end and returns the final answer and its
// context marker.
func streamView(t *testing.T, r ui.Reply) (ui.Answer, *ui.ContextView) {
	t.Helper()
	_, last := drain(t, r)
	return last, last.View
}

func TestAskFirstStopsThenTrimsOnceAllowed(t *testing.T) {
	f, eng := newMeasuringFixture(t, ui.AskFirst)
	conv := ""
	for i := 0; i < 2; i++ {
		r, err := f.svc.Send(context.Background(), conv, "question", nil)
		if err != nil {
			t.Fatal(err)
		}
		conv = r.ConversationID
		if last, view := streamView(t, r); last.State != ui.Done || view != nil {
			t.Fatalf("turn %d: %+v, marker %v", i+1, last, view)
		}
	}
	// The third question makes five messages: too long, and nobody agreed to trim.
	r, _ := f.svc.Send(context.Background(), conv, "third", nil)
	last, view := streamView(t, r)
	var full *ui.ContextFullError
	if last.State != ui.Failed || !errors.As(last.Err, &full) || view != nil {
		t.Fatalf("full context: %+v (%T), marker %v", last, last.Err, view)
	}
	ms, _ := f.svc.Messages(conv)
	if a := ms[len(ms)-1]; !a.ContextFull || a.State != ui.Failed {
		t.Fatalf("stored failure = %+v", a)
	}
	// The user agrees: the same answer is tried again with the oldest turn left out.
	if err := f.svc.AllowTrim(conv); err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Regenerate(context.Background(), conv, r.Assistant.ID)
	if err != nil {
		t.Fatal(err)
	}
	last, view = streamView(t, r)
	req := eng.lastRequest()
	kept := len(req.Messages)
	if kept > 4 || req.Messages[kept-1].Content[0].Text != "third" {
		t.Fatalf("the model saw %d messages", kept)
	}
	first := ms[5-kept] // the five messages before the answer; the newest kept
	if last.State != ui.Done || view == nil || view.FromID != first.ID {
		t.Fatalf("after consent: %+v, marker %+v, want it at %q", last, view, first.Text)
	}
	ms, _ = f.svc.Messages(conv)
	if v := ms[len(ms)-1].View; v.FromID != first.ID || ms[len(ms)-1].ContextFull {
		t.Fatalf("stored view = %+v", v)
	}
}

func TestTrimOldestNeedsNoConsent(t *testing.T) {
	f, eng := newMeasuringFixture(t, "")
	conv := ""
	var view *ui.ContextView
	for i := 0; i < 4; i++ {
		r, err := f.svc.Send(context.Background(), conv, "q", nil)
		if err != nil {
			t.Fatal(err)
		}
		conv = r.ConversationID
		var last ui.Answer
		last, view = streamView(t, r)
		if last.State != ui.Done {
			t.Fatalf("turn %d: %+v", i+1, last)
		}
	}
	if view == nil || len(eng.lastRequest().Messages) > 3 {
		t.Fatalf("seven messages were sent as %d with marker %v", len(eng.lastRequest().Messages), view)
	}
}
