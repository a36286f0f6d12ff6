package history

import (
	"errors"
	"testing"
)

// answerT stores a user turn and a finished answer and returns both.
func answerT(t *testing.T, s *Store, convID, question, answer string) (Message, Message) {
	t.Helper()
	u := Message{ConversationID: convID, Role: "user", Text: question}
	if err := s.Append(&u); err != nil {
		t.Fatal(err)
	}
	a := Message{ConversationID: convID, Role: "assistant", Text: answer, State: Done}
	if err := s.Append(&a); err != nil {
		t.Fatal(err)
	}
	return u, a
}

func TestVersionsKeepEveryRegenerationAndEdit(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	c, _ := s.CreateConversation("Versions", "")
	_, a := answerT(t, s, c.ID, "Name a bird", "A robin.")
	if a.Version != 1 || a.Versions != 1 {
		t.Fatalf("first answer version %d of %d", a.Version, a.Versions)
	}
	// A regeneration starts streaming into the same message; the first stays on record.
	a.Text, a.State, a.View = "", Streaming, View{From: 3}
	if err := s.NewVersion(&a); err != nil {
		t.Fatal(err)
	}
	a.Text, a.State = "A wren.", Done
	if err := s.Update(&a); err != nil {
		t.Fatal(err)
	}
	// An edit of the answer is a version too.
	a.Text, a.Origin, a.View = "A blackbird, says the user.", OriginEdited, View{}
	if err := s.NewVersion(&a); err != nil {
		t.Fatal(err)
	}
	if a.Version != 3 || a.Versions != 3 {
		t.Fatalf("after two new versions: version %d of %d", a.Version, a.Versions)
	}
	s.Close()
	s = openT(t, dir)
	ms, _ := s.Messages(c.ID)
	if len(ms) != 2 || ms[1].Text != "A blackbird, says the user." || ms[1].Version != 3 || ms[1].Versions != 3 || ms[1].Origin != OriginEdited {
		t.Fatalf("messages after reopen = %+v", ms)
	}
	vs, err := s.Versions(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A robin.", "A wren.", "A blackbird, says the user."}
	for i, v := range vs {
		if v.Version != i+1 || v.Text != want[i] || v.Versions != 3 {
			t.Fatalf("version %d = %+v", i+1, v)
		}
	}
	if vs[1].View.From != 3 || vs[1].State != Done {
		t.Fatalf("version 2 lost its view or state: %+v", vs[1])
	}
	// Switching back shows version 1 everywhere and keeps the others.
	if err := s.UseVersion(a.ID, 1); err != nil {
		t.Fatal(err)
	}
	ms, _ = s.Messages(c.ID)
	if ms[1].Text != "A robin." || ms[1].Version != 1 || ms[1].Versions != 3 || ms[1].Origin != "" {
		t.Fatalf("after UseVersion(1): %+v", ms[1])
	}
	if err := s.UseVersion(a.ID, 1); err != nil {
		t.Fatalf("using the version in use: %v", err)
	}
	if err := s.UseVersion(a.ID, 9); !errors.Is(err, ErrNoVersion) {
		t.Fatalf("UseVersion(9) = %v", err)
	}
	if err := s.UseVersion("nope", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("UseVersion(unknown) = %v", err)
	}
	vs, _ = s.Versions(a.ID)
	if len(vs) != 3 || vs[2].Text != want[2] || vs[2].Origin != OriginEdited {
		t.Fatalf("versions after switching = %+v", vs)
	}
	// Dropping the turn drops its versions.
	if err := s.TruncateAfter(c.ID, 1); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM message_versions`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d versions left after their message was deleted", n)
	}
}

func TestArchivingAStreamingAnswerMarksItInterrupted(t *testing.T) {
	s := openT(t, t.TempDir())
	c, _ := s.CreateConversation("x", "")
	a := Message{ConversationID: c.ID, Role: "assistant", Text: "half an ans", State: Streaming}
	s.Append(&a)
	a.Text, a.State = "", Streaming
	if err := s.NewVersion(&a); err != nil {
		t.Fatal(err)
	}
	vs, _ := s.Versions(a.ID)
	if vs[0].State != Interrupted || vs[0].Text != "half an ans" {
		t.Fatalf("archived streaming version = %+v", vs[0])
	}
}

func TestTrimConsentIsKept(t *testing.T) {
	s := openT(t, t.TempDir())
	c, _ := s.CreateConversation("x", "")
	if c.TrimOK {
		t.Fatal("new conversation already agreed to trimming")
	}
	if err := s.SetTrimOK(c.ID, true); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Conversation(c.ID)
	if !got.TrimOK {
		t.Fatal("consent not stored")
	}
	if err := s.SetTrimOK("nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown conversation: %v", err)
	}
}
