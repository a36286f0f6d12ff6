package toolcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// parseAll feeds text in pieces of n bytes and returns the events, text
// pieces of a kind joined.
func parseAll(text string, n int) (content, thinking string, calls []Call) {
	p := &Parser{NewID: func() string { return "call_1" }}
	var evs []Event
	for rest := text; rest != ""; {
		k := min(n, len(rest))
		evs = append(evs, p.Write(rest[:k])...)
		rest = rest[k:]
	}
	evs = append(evs, p.Close()...)
	for _, ev := range evs {
		switch ev.Kind {
		case Text:
			content += ev.Text
		case Thinking:
			thinking += ev.Text
		case ToolCall:
			calls = append(calls, ev.Call)
		}
	}
	return content, thinking, calls
}

func TestStreamSplitsThinkingTextAndCalls(t *testing.T) {
	out := "<|channel>thought\nThe user wants the weather.<channel|>Let me check.<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\"<|\"|>,days:3}<tool_call|><|tool_call>call:get_time{}<tool_call|><|tool_response>ignored"
	for n := 1; n <= len(out); n++ {
		content, thinking, calls := parseAll(out, n)
		if content != "Let me check." || thinking != "The user wants the weather." {
			t.Fatalf("pieces of %d: content %q, thinking %q", n, content, thinking)
		}
		if len(calls) != 2 || calls[0].Name != "get_weather" || string(calls[0].Arguments) != `{"city":"Paris, \"FR\"","days":3}` ||
			calls[1].Name != "get_time" || string(calls[1].Arguments) != `{}` || calls[0].Err != nil || calls[1].Err != nil {
			t.Fatalf("pieces of %d: calls %+v", n, calls)
		}
	}
}

// TestMalformedCallsAreReported: a call that does not parse comes out as a
// call with an error and its text; none of it is shown as content.
func TestMalformedCallsAreReported(t *testing.T) {
	for _, tc := range []struct{ out, name string }{
		{"<|tool_call>call:f{a:<|\"|>unclosed}<tool_call|>", "f"},
		{"<|tool_call>call:f{a:1", "f"},                                  // output ends inside the call
		{"<|tool_call>call:f{a:1}}<tool_call|>", "f"},                    // text after the arguments
		{"<|tool_call>call:f{a 1}<tool_call|>", "f"},                     // no colon
		{"<|tool_call>call:f{a:1 b:2}<tool_call|>", "f"},                 // no comma
		{"<|tool_call>f{a:1}<tool_call|>", ""},                           // no "call:"
		{"<|tool_call>call:{a:1}<tool_call|>", ""},                       // no name
		{"<|tool_call>call:f{a:[1,2}<tool_call|>", "f"},                  // list not closed
		{"<|tool_call>call:f{a:1}<|tool_call>call:g{}<tool_call|>", "f"}, // f never closed
	} {
		content, _, calls := parseAll(tc.out, 3)
		if content != "" {
			t.Errorf("%q: content %q", tc.out, content)
		}
		if len(calls) == 0 || calls[0].Err == nil || calls[0].Name != tc.name || !strings.HasPrefix(calls[0].Raw, CallOpen) {
			t.Errorf("%q: want a failed call named %q with its text, got %+v", tc.out, tc.name, calls)
		}
	}
}

// TestAnchorStrings: the outputs other engines failed on (ollama/ollama#15315,
// jundot/omlx#581 and #593, anomalyco/opencode#20995).
func TestAnchorStrings(t *testing.T) {
	for _, tc := range []struct {
		issue, out, name, args, thinking string
	}{
		{"ollama#15315 (backticks, quotes, newlines)",
			"<|tool_call>call:write{content:<|\"|>\n\n# Project Style Guide for Autonomous Agents' Code Generation (AGENTS.md)\n\nThis document captures the *de facto* coding standards observed across the `src/` and `components/` source code.<|\"|>,filePath:<|\"|>AGENTS.md<|\"|>}<tool_call|>",
			"write", "{\"content\":\"\\n\\n# Project Style Guide for Autonomous Agents' Code Generation (AGENTS.md)\\n\\nThis document captures the *de facto* coding standards observed across the `src/` and `components/` source code.\",\"filePath\":\"AGENTS.md\"}", ""},
		{"ollama#15315 (quotes and backslashes)",
			`<|tool_call>call:grep{include:<|"|>*.py<|"|>,output_mode:<|"|>content<|"|>,path:<|"|>/data/robotics/experiment1<|"|>,pattern:<|"|>':\s*\w+'<|"|>}<tool_call|>`,
			"grep", `{"include":"*.py","output_mode":"content","path":"/data/robotics/experiment1","pattern":"':\\s*\\w+'"}`, ""},
		{"jundot/omlx#581 (JSON quotes)", `<|tool_call>call:bash{command:"ls"}<tool_call|>`, "bash", `{"command":"ls"}`, ""},
		{"jundot/omlx#593 (thinking, then a call, then <eos>)",
			"<|channel>thought\n**** thinking contents *** <channel|><|tool_call>call:bash{command:<|\"|>ls -la<|\"|>}<tool_call|><eos>",
			"bash", `{"command":"ls -la"}`, "**** thinking contents *** "},
		{"anomalyco/opencode#20995", "<|tool_call>call:bash{command:<|\"|>ls /tmp<|\"|>,description:<|\"|>List files in /tmp<|\"|>}<tool_call|><|tool_response>",
			"bash", `{"command":"ls /tmp","description":"List files in /tmp"}`, ""},
	} {
		for _, n := range []int{1, 5, 1 << 20} {
			content, thinking, calls := parseAll(tc.out, n)
			if content != "" || thinking != tc.thinking || len(calls) != 1 || calls[0].Err != nil || calls[0].Name != tc.name {
				t.Fatalf("%s, pieces of %d: content %q thinking %q calls %+v", tc.issue, n, content, thinking, calls)
			}
			if same, err := sameJSON([]byte(tc.args), calls[0].Arguments); err != nil || !same {
				t.Fatalf("%s: arguments %s, want %s (%v)", tc.issue, calls[0].Arguments, tc.args, err)
			}
		}
	}
	// Verbatim from ollama#15315's log, where the string's opening
	// delimiter is missing: reported with its text, never shown.
	content, _, calls := parseAll(`<|tool_call>call:grep{include:<|"|>*.py<|"|>,pattern:':\s*\w+'<|"|>}<tool_call|>`, 4)
	if content != "" || len(calls) != 1 || calls[0].Err == nil || calls[0].Name != "grep" {
		t.Fatalf("the malformed log line: content %q calls %+v", content, calls)
	}
}

func TestLiteralsAndNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"{a:None,b:null,c:True,d:false}":           `{"a":null,"b":null,"c":true,"d":false}`,
		"{a:1e+20,b:3e-05,c:-0.0,d:12,e:1.5}":      `{"a":1e+20,"b":3e-05,"c":-0.0,"d":12,"e":1.5}`,
		"{a:+5,b:.5,c:5.}":                         `{"a":5,"b":0.5,"c":5}`,
		"{a:celsius, b : <|\"|> x <|\"|> }":        `{"a":"celsius","b":" x "}`,
		"{<|\"|>quoted key<|\"|>:{x:[]},e:{}}":     `{"quoted key":{"x":[]},"e":{}}`,
		"{a:[[],[{}],[1,[2,[3]]]],b:<|\"|><|\"|>}": `{"a":[[],[{}],[1,[2,[3]]]],"b":""}`,
	} {
		_, args, err := ParseCall("call:f" + in)
		if err != nil || string(args) != want {
			t.Errorf("%s: got %s (%v), want %s", in, args, err, want)
		}
		var v any
		if json.Unmarshal(args, &v) != nil {
			t.Errorf("%s: %s is not JSON", in, args)
		}
	}
}

// TestNoMarkupInText: markup outside a call never reaches the text.
func TestNoMarkupInText(t *testing.T) {
	content, _, _ := parseAll("a<tool_call|>b<|\"|>c<|tool>d<tool|>e<channel|>f<tool_response|>g<turn|>h", 2)
	if content != "abcdefg" {
		t.Fatalf("content %q", content)
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	body := "call:f{a:" + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "}"
	if _, _, err := ParseCall(body); err == nil {
		t.Fatal("200 levels of nesting parsed")
	}
}
