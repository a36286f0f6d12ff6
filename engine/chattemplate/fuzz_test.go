package chattemplate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRenderGemma4 renders the real Gemma 4 template with odd messages,
// tool arguments and tool schemas: the template may reject them, but
// nothing may panic.
func FuzzRenderGemma4(f *testing.F) {
	f.Add("user", "hello", `{"city": "Oslo", "n": 1.5}`, `{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}`, true)
	f.Add("assistant", "<|channel>thought\nx<channel|>y", `"raw"`, `{}`, false)
	f.Add("tool", "\x00\u2028 <turn|>", `[1, {"a": null}]`, `{"function": {"parameters": {"properties": {"x": {"type": ["string", "null"]}}}}}`, true)
	f.Add("system", "", `{}`, `[]`, false)
	tmpl := loadTiny(f)
	f.Fuzz(func(t *testing.T, role, content, args, tool string, think bool) {
		in := Input{
			AddGenerationPrompt: true,
			EnableThinking:      Bool(think),
			Messages: []Message{
				{Role: role, Content: content},
				{Role: "assistant", NullContent: true, ToolCalls: []ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(args)}}},
				{Role: "tool", ToolCallID: "1", Content: content},
				{Role: "user", Parts: []Part{{Type: "text", Text: content}, {Type: "image"}}},
			},
		}
		if json.Valid([]byte(tool)) {
			in.Tools = []json.RawMessage{json.RawMessage(tool)}
		}
		_, err := tmpl.Render(context.Background(), in)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("render panicked: %v", err)
		}
	})
}

// FuzzLoadTemplate parses arbitrary template text through the public API.
func FuzzLoadTemplate(f *testing.F) {
	f.Add(loadTiny(f).Source())
	f.Add("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}")
	f.Add("{{ messages[0]['content'] | trim }}")
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := New(src)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("parse panicked: %v", err)
			}
			return
		}
		tmpl.Limits.Steps, tmpl.Limits.Alloc = 100_000, 16<<20
		_, err = tmpl.Render(context.Background(), Input{Messages: []Message{{Role: "user", Content: "hi"}}, AddGenerationPrompt: true})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("render panicked: %v", err)
		}
	})
}
