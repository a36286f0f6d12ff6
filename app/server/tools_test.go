package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"perch/engine"
)

var weatherCalls = []engine.ParsedCall{
	{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Zürich, \"CH\"","note":"` + strings.Repeat("ü", 40) + `"}`)},
	{ID: "call_b", Name: "get_time", Arguments: json.RawMessage(`{}`)},
}

const toolsBody = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
	{"type":"function","function":{"name":"get_time","strict":true}}]`

// TestToolCallsAnswer: calls come back as message.tool_calls with content
// null and finish_reason "tool_calls"; the request's tool fields reach the
// engine.
func TestToolCallsAnswer(t *testing.T) {
	f := newFakeEngine(8)
	f.calls, f.stop = weatherCalls, engine.StopToolCalls
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"hi"}],`+toolsBody+`,
		"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false,
		"response_format":{"type":"json_object"}}`)
	defer resp.Body.Close()
	var r struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	c := r.Choices[0]
	if c.Message.Content != nil || c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 2 {
		t.Fatalf("answer %+v", c)
	}
	for i, tc := range c.Message.ToolCalls {
		if tc.ID != weatherCalls[i].ID || tc.Type != "function" || tc.Function.Name != weatherCalls[i].Name || tc.Function.Arguments != string(weatherCalls[i].Arguments) {
			t.Fatalf("call %d: %+v", i, tc)
		}
	}
	req := f.lastRequest()
	if len(req.Tools) != 2 || !req.Tools[1].Strict || req.ToolChoice != (engine.ToolChoice{Mode: engine.ToolFunction, Name: "get_weather"}) ||
		req.ParallelToolCalls == nil || *req.ParallelToolCalls || string(req.ResponseSchema) != `{"type":"object"}` {
		t.Fatalf("engine request: tools %+v choice %+v parallel %v schema %s", req.Tools, req.ToolChoice, req.ParallelToolCalls, req.ResponseSchema)
	}
}

// TestToolCallsStream: each call's first delta has index, id, type, name
// and empty arguments; the arguments follow in pieces that concatenate to
// the JSON; the last chunk says "tool_calls". Thinking never reaches content.
func TestToolCallsStream(t *testing.T) {
	f := newFakeEngine(8)
	f.tokens = []engine.Token{{ID: 1, Text: "hmm", Thinking: true}}
	f.calls, f.stop = weatherCalls, engine.StopToolCalls
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"stream":true,"messages":[{"role":"user","content":"hi"}],`+toolsBody+`,"tool_choice":"required"}`)
	defer resp.Body.Close()
	type delta struct {
		Content   *string `json:"content"`
		Reasoning string  `json:"reasoning_content"`
		ToolCalls []struct {
			Index    *int    `json:"index"`
			ID       *string `json:"id"`
			Type     *string `json:"type"`
			Function struct {
				Name      *string `json:"name"`
				Arguments *string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	args := map[int]string{}
	names := map[int]string{}
	var content, reasoning, finish string
	pieces := 0
	for _, ev := range readSSE(t, resp.Body) {
		if ev == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta        delta   `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(ev), &ch); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		d := ch.Choices[0].Delta
		if d.Content != nil {
			content += *d.Content
		}
		reasoning += d.Reasoning
		if ch.Choices[0].FinishReason != nil {
			finish = *ch.Choices[0].FinishReason
		}
		for _, tc := range d.ToolCalls {
			if tc.Index == nil {
				t.Fatalf("a tool call delta without index: %s", ev)
			}
			i := *tc.Index
			if _, seen := names[i]; !seen {
				if tc.ID == nil || *tc.ID != weatherCalls[i].ID || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil ||
					tc.Function.Arguments == nil || *tc.Function.Arguments != "" {
					t.Fatalf("first delta of call %d: %s", i, ev)
				}
				names[i] = *tc.Function.Name
				continue
			}
			if tc.ID != nil || tc.Function.Name != nil || tc.Function.Arguments == nil {
				t.Fatalf("a later delta of call %d repeats the head or has no arguments: %s", i, ev)
			}
			args[i] += *tc.Function.Arguments
			pieces++
		}
	}
	if content != "" || reasoning != "hmm" || finish != "tool_calls" {
		t.Fatalf("content %q reasoning %q finish %q", content, reasoning, finish)
	}
	for i, c := range weatherCalls {
		if names[i] != c.Name || args[i] != string(c.Arguments) {
			t.Fatalf("call %d accumulated to %s %s", i, names[i], args[i])
		}
	}
	if pieces < 3 {
		t.Fatalf("the arguments came in %d pieces; the long ones should be cut", pieces)
	}
}

// TestToolMessagesAccepted: assistant tool_calls (arguments as JSON text or
// as an object) and role "tool" results reach the engine as such.
func TestToolMessagesAccepted(t *testing.T) {
	f := newFakeEngine(8, "ok")
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"hi"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"c2","type":"function","function":{"name":"get_time","arguments":{"tz":"UTC"}}}]},
		{"role":"tool","tool_call_id":"c1","content":"18C"},
		{"role":"tool","tool_call_id":"c2","name":"get_time","content":[{"type":"text","text":"noon"}]}],`+toolsBody+`}`)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m := f.lastRequest().Messages
	if len(m) != 4 || len(m[1].ToolCalls) != 2 || string(m[1].ToolCalls[0].Arguments) != `{"city":"Paris"}` ||
		string(m[1].ToolCalls[1].Arguments) != `{"tz":"UTC"}` || m[2].ToolCallID != "c1" || m[3].ToolName != "get_time" || m[3].Content[0].Text != "noon" {
		t.Fatalf("messages %+v", m)
	}
}

func TestBadToolRequests(t *testing.T) {
	f := newFakeEngine(8, "x")
	_, ts := newTestServer(t, f, Options{MaxBodyBytes: 8 << 20})
	var many strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&many, `{"type":"function","function":{"name":"f%d"}},`, i)
	}
	user := `"messages":[{"role":"user","content":"x"}]`
	for _, c := range []struct{ body, param string }{
		{`{` + user + `,"tools":[` + strings.TrimSuffix(many.String(), ",") + `]}`, "tools"},
		{`{` + user + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"description":"` + strings.Repeat("a", 1<<20) + `"}}}]}`, "tools[0].function.parameters"},
		{`{` + user + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"description":"` + strings.Repeat("a", 1<<20) + `"}}}}`, "response_format.json_schema.schema"},
		{`{` + user + `,"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools"},
		{`{` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"always"}`, "tool_choice"},
		{`{` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, "tools"},
		{`{` + user + `,"tool_choice":"required"}`, "tools"},
		{`{` + user + `,"response_format":{"type":"xml"}}`, "response_format.type"},
		{`{` + user + `,"response_format":{"type":"json_schema"}}`, "response_format.json_schema.schema"},
		{`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
	} {
		resp := post(t, ts.URL, c.body)
		e := apiErr(t, resp)
		if resp.StatusCode != 400 || e.Param == nil || *e.Param != c.param {
			t.Errorf("%.80s: status %d param %v (%s); want 400 %q", c.body, resp.StatusCode, e.Param, e.Message, c.param)
		}
	}
}

// TestMalformedCallKeepsItsText: a call that did not parse still reaches
// the client as a call, its text as the arguments, so the client's JSON
// parse fails loudly instead of the markup landing in content.
func TestMalformedCallKeepsItsText(t *testing.T) {
	f := newFakeEngine(8)
	f.calls = []engine.ParsedCall{{ID: "call_x", Name: "f", Raw: `<|tool_call>call:f{a:<|"|>open}<tool_call|>`, Err: fmt.Errorf("not closed")}}
	f.stop = engine.StopToolCalls
	_, ts := newTestServer(t, f, Options{})
	resp := post(t, ts.URL, `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)
	defer resp.Body.Close()
	var r struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&r)
	m := r.Choices[0].Message
	if m.Content != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "f" || m.ToolCalls[0].Function.Arguments != f.calls[0].Raw {
		t.Fatalf("message %+v", m)
	}
}
