package processor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"perch/engine/prompt"
)

// TestPrepareRendersTools: tool declarations go into the system turn, an
// assistant's calls and the tool's result into the model's turn, through
// the checkpoint's own template; thinking and an image stay beside them.
func TestPrepareRendersTools(t *testing.T) {
	p := tinyProcessor(t, Options{})
	tool := json.RawMessage(`{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City"}},"required":["city"]}}}`)
	msgs := []prompt.Message{
		{Role: prompt.User, Content: []prompt.Part{{Type: prompt.Image, Data: fixture(t, "vision-tiny", "image.png")}, {Type: prompt.Text, Text: "Weather in Paris?"}}},
		{Role: prompt.Assistant, ToolCalls: []prompt.ToolCall{{ID: "c1", Name: "get_weather", Arguments: []byte(`{"city":"Paris","days":2}`)}}},
		{Role: prompt.Tool, ToolCallID: "c1", Content: []prompt.Part{{Type: prompt.Text, Text: "18C"}}},
	}
	prep, err := p.Prepare(context.Background(), msgs, PrepareOptions{Tools: []json.RawMessage{tool}, EnableThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Media) != 1 || prep.ByKind["image"] == 0 {
		t.Fatalf("the image beside the tools: %d media, %v", len(prep.Media), prep.ByKind)
	}
	text := p.Tokenizer().Decode(prep.IDs, false)
	for _, want := range []string{
		"<|turn>system\n<|think|>\n<|tool>declaration:get_weather{description:<|\"|>Weather<|\"|>,parameters:{properties:{city:{description:<|\"|>City<|\"|>,type:<|\"|>STRING<|\"|>}},required:[<|\"|>city<|\"|>],type:<|\"|>OBJECT<|\"|>}}<tool|><turn|>",
		"<|turn>model\n<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:2}<tool_call|><|tool_response>response:get_weather{value:<|\"|>18C<|\"|>}<tool_response|>",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("prompt %q lacks %q", text, want)
		}
	}
	if !strings.HasSuffix(text, "<tool_response|>") {
		t.Fatalf("after a tool result the model goes on in its turn; prompt ends %q", text[max(0, len(text)-60):])
	}
}
