package toolcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParser: any output, cut anywhere, gives the same events as when fed
// whole; every call's arguments are a JSON object or the call has an error;
// no markup reaches the text.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"<|channel>thought\nhmm<channel|>ok<|tool_call>call:f{a:<|\"|>}{,:<|\"|>,b:[1,{c:None}]}<tool_call|><|tool_response>",
		"<|tool_call>call:f{a:1",
		"<|tool_call>call:f{a:\"x\\\"y\"}<tool_call|>text<|",
		"plain text < and <| and <tool",
		"<|tool_call>call:f{<|\"|>k<|\"|>:1e+20,x:-0.0,y:.5}<tool_call|>",
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, out string, cut uint8) {
		whole := collectEvents(out, len(out)+1)
		pieces := collectEvents(out, int(cut)%16+1)
		if len(whole) != len(pieces) {
			t.Fatalf("whole gives %d events, pieces %d", len(whole), len(pieces))
		}
		for i := range whole {
			a, b := whole[i], pieces[i]
			if a.Kind != b.Kind || a.Text != b.Text || string(a.Call.Arguments) != string(b.Call.Arguments) || a.Call.Name != b.Call.Name || (a.Call.Err == nil) != (b.Call.Err == nil) {
				t.Fatalf("event %d: whole %+v, pieces %+v", i, a, b)
			}
			if a.Kind == ToolCall && a.Call.Err == nil {
				var obj map[string]any
				if err := json.Unmarshal(a.Call.Arguments, &obj); err != nil {
					t.Fatalf("arguments %s: %v", a.Call.Arguments, err)
				}
			}
			if a.Kind != ToolCall {
				for _, m := range []string{CallOpen, CallClose, Quote, ChannelOpen, ChannelClose} {
					if strings.Contains(a.Text, m) {
						t.Fatalf("markup %s in text %q", m, a.Text)
					}
				}
			}
		}
	})
}

// collectEvents parses out in pieces of n bytes, merging adjacent text
// events of one kind (a stream may cut text anywhere).
func collectEvents(out string, n int) []Event {
	p := &Parser{NewID: func() string { return "id" }}
	var evs []Event
	add := func(list []Event) {
		for _, ev := range list {
			if k := len(evs) - 1; k >= 0 && ev.Kind != ToolCall && evs[k].Kind == ev.Kind {
				evs[k].Text += ev.Text
				continue
			}
			evs = append(evs, ev)
		}
	}
	for rest := out; rest != ""; {
		k := min(n, len(rest))
		add(p.Write(rest[:k]))
		rest = rest[k:]
	}
	add(p.Close())
	return evs
}
