package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"perch/app/server/clientstest"
	"perch/engine"
)

// scriptEngine answers like a model that knows its tools: a call of the
// chosen (or first) tool while no tool result has come back, a JSON object
// under a response schema, otherwise a sentence. It lets the real clients'
// loops (runTools) run to their end; the tiny model, whose weights are
// random, is driven by the same clients in package main's test.
type scriptEngine struct{}

func (scriptEngine) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	if err := engine.CheckTools(req.Tools, req.ToolChoice); err != nil {
		return nil, err
	}
	ch := make(chan engine.Event, 8)
	stop := engine.StopEOS
	last := req.Messages[len(req.Messages)-1]
	switch {
	case len(req.ResponseSchema) > 0:
		ch <- engine.Event{Kind: engine.EventToken, Token: engine.Token{ID: 1, Text: `{"name":"perch",`}}
		ch <- engine.Event{Kind: engine.EventToken, Token: engine.Token{ID: 2, Text: `"legs":0}`}}
	case len(req.Tools) > 0 && req.ToolChoice.Mode != engine.ToolNone && last.Role != engine.RoleTool:
		name := req.Tools[0].Name
		if req.ToolChoice.Mode == engine.ToolFunction {
			name = req.ToolChoice.Name
		}
		ch <- engine.Event{Kind: engine.EventToken, Token: engine.Token{ID: 1, Text: "the weather, then.", Thinking: true}}
		ch <- engine.Event{Kind: engine.EventToolCall, Call: engine.ParsedCall{ID: "call_" + name, Name: name,
			Arguments: json.RawMessage(`{"city":"Zürich \"CH\" {1}, ` + "`x`" + `","days":3,"unit":"celsius"}`)}}
		stop = engine.StopToolCalls
	default:
		ch <- engine.Event{Kind: engine.EventToken, Token: engine.Token{ID: 1, Text: "It is 18C and partly cloudy."}}
	}
	ch <- engine.Event{Kind: engine.EventDone, StopReason: stop, Stats: &engine.Stats{PromptTokens: 9, GeneratedTokens: 2}}
	close(ch)
	return ch, nil
}

// TestRealClientsWireFormat: the OpenAI JS SDK (create, stream, runTools),
// the Vercel AI SDK (generateText, streamText, generateObject) and the
// OpenAI Agents SDK, installed from npm, read Perch's answers: calls,
// streamed call deltas, tool results sent back, structured output.
func TestRealClientsWireFormat(t *testing.T) {
	dir := clientstest.Install(t)
	s := New(Options{Engine: scriptEngine{}, Model: testModel})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	out := clientstest.Run(t, dir, ts.URL, testModel.ID, "all", 1)
	if len(out.Results) != 7 {
		t.Fatalf("%d scenarios ran, want 7", len(out.Results))
	}
	for _, r := range out.Results {
		if !r.OK {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
	}
	if len(out.Calls) < 6 {
		t.Errorf("%d tool calls reached the clients' functions, want at least 6", len(out.Calls))
	}
	for _, c := range out.Calls {
		if !strings.Contains(string(c.Arguments), "Zürich \\\"CH\\\" {1}") {
			t.Errorf("%s: arguments %s lost characters on the way", c.Name, c.Arguments)
		}
	}
}
