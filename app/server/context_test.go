package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"perch/engine"
)

// measuredEngine costs 1000 tokens a message in a 4096-token context and,
// like the real engine, refuses prompts the context cannot hold.
type measuredEngine struct{ *fakeEngine }

func (m measuredEngine) Measure(_ context.Context, req engine.Request) (engine.Measure, error) {
	out := engine.Measure{Context: 4096, Tokens: 1000 * len(req.Messages)}
	for range req.Messages {
		out.Messages = append(out.Messages, engine.MessageSize{Tokens: 1000})
	}
	return out, nil
}

// Generate applies the request's context policy as the engine's Prepare
// does (measure, let the policy cut, again until it is done), then
// refuses what is still too long.
func (m measuredEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	for req.Fit != nil {
		meas, _ := m.Measure(ctx, req)
		next, done, err := req.Fit.Fit(req.Messages, meas)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		req.Messages = next
	}
	if n := len(req.Messages); n > 4 {
		return nil, &engine.ContextError{Prompt: 1000 * n, Context: 4096}
	}
	return m.fakeEngine.Generate(ctx, req)
}

func TestTruncationOnlyWhenAsked(t *testing.T) {
	f := newFakeEngine(4, "ok")
	s := New(Options{Engine: measuredEngine{f}, Model: testModel})
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); f.close() }()
	msgs := `[{"role":"system","content":"be brief"},{"role":"user","content":"1"},{"role":"assistant","content":"a"},
		{"role":"user","content":"2"},{"role":"assistant","content":"b"},{"role":"user","content":"3"}]`

	// Not asked: OpenAI's error for a full context, with the way out.
	resp := post(t, ts.URL, `{"messages":`+msgs+`}`)
	var e struct {
		Error struct{ Code, Message, Param string }
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || e.Error.Code != "context_length_exceeded" || !strings.Contains(e.Error.Message, `"truncation": "auto"`) {
		t.Fatalf("without truncation: %d %+v", resp.StatusCode, e.Error)
	}
	// Asked: the system prompt and the newest turns go to the model.
	resp = post(t, ts.URL, `{"truncation":"auto","messages":`+msgs+`}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with truncation: %d", resp.StatusCode)
	}
	f.mu.Lock()
	req := f.requests[len(f.requests)-1]
	f.mu.Unlock()
	if len(req.Messages) > 3 || req.Messages[0].Role != engine.RoleSystem || req.Messages[len(req.Messages)-1].Content[0].Text != "3" {
		t.Fatalf("the model saw %+v", req.Messages)
	}
	// A value it does not know is refused.
	resp = post(t, ts.URL, `{"truncation":"middle","messages":`+msgs+`}`)
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || e.Error.Param != "truncation" {
		t.Fatalf("truncation=middle: %d %+v", resp.StatusCode, e.Error)
	}
}
