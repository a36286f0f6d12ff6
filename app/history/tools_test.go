package history

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func toolRounds(content string) []ToolRound {
	return []ToolRound{{Text: "Let me look.", Calls: []ToolCall{{ID: "c0", Name: "read_file", Server: "files", Tool: "read_file",
		Arguments: json.RawMessage(`{"path":"notes.txt"}`), Content: content, Done: true}}}}
}

// TestToolCallsAreStoredWithTheAnswer: an answer's calls and results come
// back after a reopen, follow its versions (regenerate, ◀ ▶), and a
// conversation's choice of servers is kept.
func TestToolCallsAreStoredWithTheAnswer(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateConversation("Notes", "m")
	u := Message{ConversationID: c.ID, Role: "user", Text: "What do my notes say?"}
	if err := s.Append(&u); err != nil {
		t.Fatal(err)
	}
	a := Message{ConversationID: c.ID, Role: "assistant", State: Streaming, Tools: toolRounds("")}
	a.Tools[0].Calls[0].Done = false
	if err := s.Append(&a); err != nil {
		t.Fatal(err)
	}
	a.Tools, a.Text, a.State = toolRounds("buy seeds"), "They say: buy seeds.", Done
	if err := s.Update(&a); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ToolServers(c.ID); ok || err != nil {
		t.Fatalf("a new conversation chose servers (%v, %v)", ok, err)
	}
	if err := s.SetToolServers(c.ID, []string{"files"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openT(t, dir)
	ms, err := s.Messages(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ms[1].Tools, toolRounds("buy seeds")) || ms[0].Tools != nil {
		t.Fatalf("tools after reopen: user %+v, answer %+v", ms[0].Tools, ms[1].Tools)
	}
	if got, ok, err := s.ToolServers(c.ID); !ok || err != nil || !reflect.DeepEqual(got, []string{"files"}) {
		t.Fatalf("servers after reopen = %v, %v, %v", got, ok, err)
	}
	if err := s.SetToolServers(c.ID, []string{}); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s.ToolServers(c.ID); !ok || len(got) != 0 {
		t.Fatalf("no servers chosen read back as %v, %v", got, ok)
	}
	if _, _, err := s.ToolServers("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown conversation: %v", err)
	}

	// A regeneration without tools is a new version; the old one keeps its calls.
	b := ms[1]
	b.Tools, b.Text = nil, "I cannot tell."
	if err := s.NewVersion(&b); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Versions(b.ID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions = %d, %v", len(vs), err)
	}
	if !reflect.DeepEqual(vs[0].Tools, toolRounds("buy seeds")) || vs[1].Tools != nil {
		t.Fatalf("versions' tools: %+v / %+v", vs[0].Tools, vs[1].Tools)
	}
	if err := s.UseVersion(b.ID, 1); err != nil {
		t.Fatal(err)
	}
	ms, _ = s.Messages(c.ID)
	if !reflect.DeepEqual(ms[1].Tools, toolRounds("buy seeds")) {
		t.Fatalf("back on version 1, tools = %+v", ms[1].Tools)
	}
	if res, _ := s.IntegrityCheck(); res != "ok" {
		t.Fatalf("integrity check: %s", res)
	}
}

// TestUnreadableToolsColumnIsAnErrorCall: a damaged tools value reads as
// one failed call saying so; the message itself still reads.
func TestUnreadableToolsColumnIsAnErrorCall(t *testing.T) {
	got := decodeTools(`[{"calls": 7}]`)
	if len(got) != 1 || len(got[0].Calls) != 1 || !got[0].Calls[0].IsError {
		t.Fatalf("decodeTools(damaged) = %+v", got)
	}
	if decodeTools("") != nil {
		t.Fatal("an empty column has tools")
	}
	big := toolRounds(string(make([]byte, maxToolsJSON)))
	if _, err := encodeTools(big); err == nil {
		t.Fatal("an oversized value was accepted")
	}
}

func FuzzDecodeTools(f *testing.F) {
	f.Add(`[{"text":"x","calls":[{"id":"a","name":"b","content":"c","done":true}]}]`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range decodeTools(s) {
			_ = len(r.Calls)
		}
	})
}
