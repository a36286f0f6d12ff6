package toolloop

import (
	"context"
	"testing"

	"perch/app/contextfit"
	"perch/engine"
)

// sized measures each message as 100 tokens in a 1,600-token context.
type sized struct{}

func (sized) Measure(_ context.Context, req engine.Request) (engine.Measure, error) {
	m := engine.Measure{Context: 1600}
	for range req.Messages {
		m.Messages = append(m.Messages, engine.MessageSize{Tokens: 100})
		m.Tokens += 100
	}
	return m, nil
}

// TestTrimKeepsCallsWithResults: contextfit (the chat's trimming) cuts a
// conversation only before a user turn, so an assistant turn with tool
// calls and the tool turns answering it leave together or stay together.
func TestTrimKeepsCallsWithResults(t *testing.T) {
	var msgs []engine.Message
	for i := 0; i < 6; i++ {
		msgs = append(msgs, engine.Text(engine.RoleUser, "q"),
			engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c", Name: "echo", Arguments: []byte(`{}`)}}},
			engine.Message{Role: engine.RoleTool, ToolCallID: "c", ToolName: "echo", Content: []engine.Part{{Type: engine.PartText, Text: "r"}}},
			engine.Text(engine.RoleAssistant, "a"))
	}
	msgs = append(msgs, engine.Text(engine.RoleUser, "last"))
	req, cut, _, err := contextfit.Fit(context.Background(), sized{}, engine.Request{Messages: msgs}, contextfit.Cut{})
	if err != nil {
		t.Fatal(err)
	}
	if !cut.Trimmed() {
		t.Fatal("nothing was trimmed; the test needs a conversation that does not fit")
	}
	kept := req.Messages
	if kept[0].Role != engine.RoleUser {
		t.Fatalf("the kept conversation starts with a %s turn", kept[0].Role)
	}
	for i, m := range kept {
		if m.Role == engine.RoleTool && (i == 0 || len(kept[i-1].ToolCalls) == 0) {
			t.Fatalf("tool turn %d kept without its call", i)
		}
		if len(m.ToolCalls) > 0 && (i+1 == len(kept) || kept[i+1].Role != engine.RoleTool) {
			t.Fatalf("call turn %d kept without its result", i)
		}
	}
}
