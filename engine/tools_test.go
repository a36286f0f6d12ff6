package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

var weatherTool = Tool{Name: "get_weather", Description: "Weather of a city",
	Parameters: []byte(`{"properties":{"city":{"description":"City name"},"days":{"type":["integer","null"]},"units":{"enum":["c","f"]},"at":{"properties":{"lat":{"type":"number"}}}},"required":["city"]}`)}

// TestToolsNormalisedForTheTemplate: schemas without "type" get one (the
// template upper-cases it), type lists become type + nullable.
func TestToolsNormalisedForTheTemplate(t *testing.T) {
	raw, err := templateTools([]Tool{weatherTool, {Name: "now"}}, ToolChoice{})
	if err != nil {
		t.Fatal(err)
	}
	var fn struct {
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Type       string                    `json:"type"`
				Properties map[string]map[string]any `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw[0], &fn); err != nil {
		t.Fatal(err)
	}
	p := fn.Function.Parameters
	if p.Type != "object" || p.Properties["city"]["type"] != "string" || p.Properties["days"]["type"] != "integer" ||
		p.Properties["days"]["nullable"] != true || p.Properties["units"]["type"] != "string" || p.Properties["at"]["type"] != "object" {
		t.Fatalf("normalised: %s", raw[0])
	}
	if !strings.Contains(string(raw[1]), `"parameters":{"properties":{},"type":"object"}`) {
		t.Fatalf("a tool without parameters: %s", raw[1])
	}
}

func TestToolLimitsBeforeWork(t *testing.T) {
	many := make([]Tool, 1000)
	for i := range many {
		many[i] = Tool{Name: "f" + strings.Repeat("x", i%50)}
	}
	big := Tool{Name: "big", Parameters: []byte(`{"type":"object","description":"` + strings.Repeat("a", 1<<20) + `"}`)}
	for name, tc := range map[string]struct {
		tools  []Tool
		choice ToolChoice
	}{
		"1000 tools":        {many, ToolChoice{}},
		"1 MB schema":       {[]Tool{big}, ToolChoice{}},
		"bad name":          {[]Tool{{Name: "a b"}}, ToolChoice{}},
		"twice":             {[]Tool{{Name: "a"}, {Name: "a"}}, ToolChoice{}},
		"not JSON":          {[]Tool{{Name: "a", Parameters: []byte(`{`)}}, ToolChoice{}},
		"not an object":     {[]Tool{{Name: "a", Parameters: []byte(`[1]`)}}, ToolChoice{}},
		"unknown function":  {[]Tool{{Name: "a"}}, ToolChoice{Mode: ToolFunction, Name: "b"}},
		"required, no tool": {nil, ToolChoice{Mode: ToolRequired}},
	} {
		_, err := templateTools(tc.tools, tc.choice)
		var te *ToolError
		if !errors.As(err, &te) {
			t.Errorf("%s: got %v, want a ToolError", name, err)
		}
	}
}

// TestToolCallEvents: ids the model writes in the tool syntax come out as
// a ToolCall event and the finish reason "tool_calls"; no markup as text.
func TestToolCallEvents(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	for _, parallel := range []bool{true, false} {
		j := &job{ctx: context.Background(), events: make(chan Event, 4096),
			req: Request{Tools: []Tool{weatherTool}, ParallelToolCalls: &parallel}}
		out := e.newOutput(j)
		ids := e.tok.Encode("Checking.<|tool_call>call:get_weather{city:<|\"|>Paris, {FR}<|\"|>,days:3}<tool_call|><|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>}<tool_call|><|tool_response>", false)
		var last int32
		for _, id := range ids {
			last = id
			if !out.token(id) {
				break
			}
		}
		close(j.events)
		var text string
		var calls []ParsedCall
		for ev := range j.events {
			switch ev.Kind {
			case EventToken:
				text += ev.Token.Text
			case EventToolCall:
				calls = append(calls, ev.Call)
			}
		}
		want := 2
		if !parallel {
			want = 1
		}
		if text != "Checking." || len(calls) != want || calls[0].Err != nil || calls[0].Name != "get_weather" ||
			string(calls[0].Arguments) != `{"city":"Paris, {FR}","days":3}` || !strings.HasPrefix(calls[0].ID, "call_") {
			t.Fatalf("parallel %v: text %q, calls %+v", parallel, text, calls)
		}
		if r := out.stopReason(last); r != StopToolCalls {
			t.Fatalf("parallel %v: stop reason %q", parallel, r)
		}
	}
}

// TestToolsThroughGenerate: a request with tools and a tool round trip in
// its history renders, runs, and its follow-up reuses the cached prefix.
func TestToolsThroughGenerate(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	first := Request{Tools: []Tool{weatherTool}, MaxTokens: 4, Sampling: Sampling{Temperature: f32(0)},
		Messages: []Message{Text(RoleSystem, "Be brief."), Text(RoleUser, "Weather in Paris?")}}
	ch, err := e.Generate(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	_, done := collect(t, ch)
	if done.Kind != EventDone {
		t.Fatalf("first request: %+v", done)
	}
	call := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}}}
	result := Message{Role: RoleTool, ToolCallID: "call_1", Content: []Part{{Type: PartText, Text: "18C"}}}
	second := first
	second.Messages = append(append([]Message{}, first.Messages...), call, result)
	m, err := e.Measure(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	ch, err = e.Generate(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	_, last := collect(t, ch)
	if last.Kind != EventDone || last.Stats.PromptTokens != m.Tokens {
		t.Fatalf("second request: %+v (measured %d tokens)", last, m.Tokens)
	}
	// Everything up to the first answer's turn opener is shared (the first
	// prompt ends in an empty thought channel the history does not render).
	thought := len(e.tok.Encode("<|channel>thought\n<channel|>", false))
	if first := done.Stats.PromptTokens; last.Stats.PrefixReused != first-thought {
		t.Fatalf("the follow-up reused %d prompt tokens; the first prompt had %d", last.Stats.PrefixReused, first)
	}
}

// TestToolChoiceNoneSuppressesCalls: under tool_choice none the sampler
// never draws <|tool_call>; under auto it may.
func TestToolChoiceNoneSuppressesCalls(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	open, ok := e.tok.TokenID("<|tool_call>")
	if !ok {
		t.Fatal("the tiny tokenizer has no <|tool_call>")
	}
	tools := []Tool{weatherTool}
	if ids := e.suppressed(Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolNone}}); !slices.Contains(ids, open) {
		t.Fatalf("none: suppressed %v", ids)
	}
	if ids := e.suppressed(Request{Tools: tools}); slices.Contains(ids, open) {
		t.Fatalf("auto: suppressed %v", ids)
	}
}
