package contextfit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"perch/engine"
)

func callTurn(id string) engine.Message {
	return engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: id, Name: "read", Arguments: []byte(`{}`)}}}
}

func resultTurn(id, text string) engine.Message {
	return engine.Message{Role: engine.RoleTool, ToolCallID: id, ToolName: "read", Content: []engine.Part{{Type: engine.PartText, Text: text}}}
}

// checkPairs fails when a kept tool turn lacks the call it answers or a
// kept call lacks its result.
func checkPairs(t *testing.T, kept []engine.Message) {
	t.Helper()
	calls := map[string]bool{}
	for _, m := range kept {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
	}
	answered := map[string]bool{}
	for i, m := range kept {
		if m.Role == engine.RoleTool {
			if !calls[m.ToolCallID] {
				t.Fatalf("tool turn %d (%s) kept without its call", i, m.ToolCallID)
			}
			answered[m.ToolCallID] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			t.Fatalf("call %s kept without its result", id)
		}
	}
}

// TestAnswerInProgressStaysWhole: while an answer calls tools round after
// round, its user turn, calls and results are one unit: older turns leave
// first, and when the unit alone does not fit the request fails rather
// than keeping results whose calls were cut (what a cut that moved past
// the newest user turn used to send: the lone last tool turn).
func TestAnswerInProgressStaysWhole(t *testing.T) {
	for _, tc := range []struct{ old, rounds int }{{8, 2}, {8, 4}, {6, 6}, {2, 10}} {
		var conv []engine.Message
		for i := 0; i < tc.old; i++ {
			conv = append(conv, engine.Text(engine.RoleUser, "q"), engine.Text(engine.RoleAssistant, "a"))
		}
		conv = append(conv, engine.Text(engine.RoleUser, "now"))
		for r := 0; r < tc.rounds; r++ {
			id := string(rune('a' + r))
			conv = append(conv, callTurn(id), resultTurn(id, strings.Repeat("w ", 4)))
		}
		m := &fakeMeasure{context: 181} // 136 tokens may go
		unit, _ := m.Measure(context.Background(), engine.Request{Messages: conv[2*tc.old:]})
		tc := struct {
			old, rounds int
			fits        bool
		}{tc.old, tc.rounds, unit.Tokens <= Limit(181, 0)}
		req, cut, _, err := Fit(context.Background(), m, engine.Request{Messages: conv}, Cut{})
		var tl *TooLongError
		switch {
		case tc.fits && err != nil:
			t.Fatalf("%d old turns, %d rounds: %v", tc.old, tc.rounds, err)
		case !tc.fits && !errors.As(err, &tl):
			t.Fatalf("%d old turns, %d rounds: want TooLongError, got %v (cut %+v)", tc.old, tc.rounds, err, cut)
		}
		if req.Messages[0].Role != engine.RoleUser {
			t.Fatalf("%d old turns, %d rounds: the request starts with a %s turn", tc.old, tc.rounds, req.Messages[0].Role)
		}
		if cut.From > 2*tc.old {
			t.Fatalf("%d old turns, %d rounds: the cut %d passed the newest user turn", tc.old, tc.rounds, cut.From)
		}
		checkPairs(t, req.Messages)
	}
}

// TestMediaLeavingKeepsCalls: when an old turn's attachments leave, the
// note standing in for them keeps the turn's calls and the call id a tool
// turn answers.
func TestMediaLeavingKeepsCalls(t *testing.T) {
	withPhoto := callTurn("p")
	withPhoto.Content = []engine.Part{{Type: engine.PartImage, Name: "a.png", Data: []byte{1}}}
	res := resultTurn("p", "ok")
	res.Content = append(res.Content, engine.Part{Type: engine.PartImage, Name: "shot.png", Data: []byte{1}})
	req := engine.Request{Messages: []engine.Message{engine.Text(engine.RoleUser, "q"), withPhoto, res, engine.Text(engine.RoleUser, "next")}}
	got := Apply(req, 0, Cut{MediaFrom: 3})
	if hasMedia(got.Messages[1]) || hasMedia(got.Messages[2]) {
		t.Fatal("attachments stayed")
	}
	if len(got.Messages[1].ToolCalls) != 1 || got.Messages[2].ToolCallID != "p" || got.Messages[2].ToolName != "read" {
		t.Fatalf("calls lost with the attachments: %+v / %+v", got.Messages[1], got.Messages[2])
	}
	checkPairs(t, got.Messages)
}
