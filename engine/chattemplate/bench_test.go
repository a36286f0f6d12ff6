package chattemplate

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// longConversation is n alternating user/assistant turns with a system
// prompt and one tool round trip.
func longConversation(n int) Input {
	in := Input{AddGenerationPrompt: true, Tools: []json.RawMessage{
		[]byte(`{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City"}}, "required": ["city"]}}}`)}}
	in.Messages = append(in.Messages, Message{Role: "system", Content: "You are a helpful assistant."})
	for i := range n {
		in.Messages = append(in.Messages, Message{Role: "user", Content: fmt.Sprintf("Question number %d: what do you think about herons at dawn?", i)})
		if i == n/2 {
			in.Messages = append(in.Messages,
				Message{Role: "assistant", NullContent: true, ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: []byte(`{"city": "Oslo"}`)}}},
				Message{Role: "tool", ToolCallID: "c1", Content: `{"temperature": -3}`})
		}
		in.Messages = append(in.Messages, Message{Role: "assistant", Content: "<|channel>thought\nhmm<channel|>Herons are patient hunters; dawn is their best hour."})
	}
	return in
}

// BenchmarkRenderGemma4 renders the real Gemma 4 template, as every
// request does.
func BenchmarkRenderGemma4(b *testing.B) {
	tmpl := loadTiny(b)
	for _, turns := range []int{1, 20, 300} {
		in := longConversation(turns)
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			var out string
			for range b.N {
				var err error
				if out, err = tmpl.Render(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes")
		})
	}
}

// BenchmarkParseGemma4 is the one-time cost of Load's parse.
func BenchmarkParseGemma4(b *testing.B) {
	src := loadTiny(b).Source()
	for range b.N {
		if _, err := New(src); err != nil {
			b.Fatal(err)
		}
	}
}
