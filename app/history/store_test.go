package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openT(t *testing.T, dir string) *Store {
	t.Helper()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRoundTripSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateConversation("Birds", "gemma-4-e2b")
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	a, err := s.PutBlob(png, Attachment{Name: "robin.png", Kind: "image", MIME: "image/png", Width: 4, Height: 3, Thumb: []byte{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	u := Message{ConversationID: c.ID, Role: "user", Text: "What bird is this?", Attachments: []Attachment{a}}
	if err := s.Append(&u); err != nil {
		t.Fatal(err)
	}
	r := Message{ConversationID: c.ID, Role: "assistant", State: Streaming}
	if err := s.Append(&r); err != nil {
		t.Fatal(err)
	}
	r.Text, r.Thinking, r.State = "A **robin**.", "red breast", Done
	r.Stats = Stats{PromptTokens: 300, GeneratedTokens: 4, TimeToFirst: 420 * time.Millisecond, Elapsed: time.Second, TokensPerSec: 12.5}
	if err := s.Update(&r); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openT(t, dir)
	msgs, err := s.Messages(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Seq != 1 || msgs[1].Seq != 2 {
		t.Fatalf("messages = %+v", msgs)
	}
	if got := msgs[0]; got.Text != u.Text || len(got.Attachments) != 1 || got.Attachments[0].Name != "robin.png" ||
		got.Attachments[0].Width != 4 || !bytes.Equal(got.Attachments[0].Thumb, []byte{1, 2}) {
		t.Fatalf("user message = %+v", got)
	}
	if got := msgs[1]; got.Text != r.Text || got.Thinking != "red breast" || got.State != Done || got.Stats != r.Stats {
		t.Fatalf("answer = %+v, want stats %+v", got, r.Stats)
	}
	data, err := s.ReadBlob(a.SHA256)
	if err != nil || !bytes.Equal(data, png) {
		t.Fatalf("ReadBlob = %q, %v", data, err)
	}
}

func TestSearchRenameDeleteOrder(t *testing.T) {
	s := openT(t, t.TempDir())
	a, _ := s.CreateConversation("Trip to Lisbon", "")
	time.Sleep(2 * time.Millisecond)
	b, _ := s.CreateConversation("Go generics", "")
	time.Sleep(2 * time.Millisecond)
	c, _ := s.CreateConversation("100% done_ish", "")

	all, _ := s.Conversations("")
	if len(all) != 3 || all[0].ID != c.ID || all[2].ID != a.ID {
		t.Fatalf("newest first: %+v", all)
	}
	// A new message moves a conversation to the top.
	m := Message{ConversationID: a.ID, Role: "user", Text: "hi"}
	time.Sleep(2 * time.Millisecond)
	if err := s.Append(&m); err != nil {
		t.Fatal(err)
	}
	all, _ = s.Conversations("")
	if all[0].ID != a.ID {
		t.Fatalf("after append, first = %q", all[0].Title)
	}
	got, _ := s.Conversations("lisb")
	if len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("search lisb = %+v", got)
	}
	// LIKE wildcards in the query are literal.
	if got, _ := s.Conversations("%"); len(got) != 1 || got[0].ID != c.ID {
		t.Fatalf("search %% = %+v", got)
	}
	if got, _ := s.Conversations("_"); len(got) != 1 || got[0].ID != c.ID {
		t.Fatalf("search _ = %+v", got)
	}
	if err := s.Rename(b.ID, "Rust lifetimes"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Conversations("rust"); len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("after rename = %+v", got)
	}
	if err := s.DeleteConversation(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation(a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted conversation: %v", err)
	}
	if msgs, _ := s.Messages(a.ID); len(msgs) != 0 {
		t.Fatalf("messages of deleted conversation: %d", len(msgs))
	}
	if err := s.Rename("nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rename unknown: %v", err)
	}
}

func TestTruncateAfterReplacesTail(t *testing.T) {
	s := openT(t, t.TempDir())
	c, _ := s.CreateConversation("t", "")
	for _, txt := range []string{"q1", "a1", "q2", "a2"} {
		m := Message{ConversationID: c.ID, Role: "user", Text: txt}
		if err := s.Append(&m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TruncateAfter(c.ID, 2); err != nil {
		t.Fatal(err)
	}
	m := Message{ConversationID: c.ID, Role: "user", Text: "q2 edited"}
	if err := s.Append(&m); err != nil {
		t.Fatal(err)
	}
	msgs, _ := s.Messages(c.ID)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "q1,a1,q2 edited" || msgs[2].Seq != 3 {
		t.Fatalf("after truncate: %v (seq %d)", texts, msgs[2].Seq)
	}
}

func TestBlobsAreContentAddressedAndCollected(t *testing.T) {
	s := openT(t, t.TempDir())
	a1, err := s.PutBlob([]byte("same"), Attachment{Name: "a.wav", Kind: "audio"})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := s.PutBlob([]byte("same"), Attachment{Name: "b.wav", Kind: "audio"})
	if a1.SHA256 != a2.SHA256 || a1.SHA256 != "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5" {
		t.Fatalf("sha = %s / %s", a1.SHA256, a2.SHA256)
	}
	if fi, err := os.Stat(s.BlobPath(a1.SHA256)); err != nil || fi.Size() != 4 {
		t.Fatalf("blob file: %v", err)
	}
	c, _ := s.CreateConversation("x", "")
	m := Message{ConversationID: c.ID, Role: "user", Attachments: []Attachment{a1}}
	s.Append(&m)
	orphan, _ := s.PutBlob([]byte("orphan"), Attachment{Kind: "image"})

	// A damaged file is reported, not returned.
	os.WriteFile(s.BlobPath(orphan.SHA256), []byte("tampered"), 0o600)
	if _, err := s.ReadBlob(orphan.SHA256); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("tampered blob: %v", err)
	}
	if err := s.collectBlobs(-time.Hour); err != nil { // everything counts as old
		t.Fatal(err)
	}
	if _, err := os.Stat(s.BlobPath(orphan.SHA256)); !os.IsNotExist(err) {
		t.Fatalf("orphan blob still there: %v", err)
	}
	if _, err := s.ReadBlob(a1.SHA256); err != nil {
		t.Fatalf("referenced blob collected: %v", err)
	}
	if err := s.DeleteConversation(c.ID); err != nil {
		t.Fatal(err)
	}
	// Young blobs survive a delete (they may belong to a message being composed).
	if _, err := s.ReadBlob(a1.SHA256); err != nil {
		t.Fatalf("young blob collected: %v", err)
	}
}

func TestOpenMarksStreamingAnswersInterrupted(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := Open(dir)
	c, _ := s.CreateConversation("x", "")
	u := Message{ConversationID: c.ID, Role: "user", Text: "tell me a story"}
	s.Append(&u)
	r := Message{ConversationID: c.ID, Role: "assistant", State: Streaming}
	s.Append(&r)
	r.Text = "Once upon"
	r.State = Streaming
	s.Update(&r)
	os.WriteFile(filepath.Join(dir, "attachments", "ab", "x.tmp"), nil, 0o600) // no dir: ignored
	os.MkdirAll(filepath.Join(dir, "attachments", "ab"), 0o700)
	os.WriteFile(filepath.Join(dir, "attachments", "ab", "half.tmp"), []byte("partial"), 0o600)
	s.Close()

	s, rec, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rec.Interrupted != 1 || rec.Quarantined != "" {
		t.Fatalf("recovery = %+v", rec)
	}
	msgs, _ := s.Messages(c.ID)
	if msgs[1].State != Interrupted || msgs[1].Text != "Once upon" {
		t.Fatalf("answer = %+v", msgs[1])
	}
	if _, err := os.Stat(filepath.Join(dir, "attachments", "ab", "half.tmp")); !os.IsNotExist(err) {
		t.Fatal("half-written attachment not removed")
	}
}

func TestCorruptDatabaseIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	garbage := bytes.Repeat([]byte("not sqlite "), 500)
	os.WriteFile(filepath.Join(dir, DBName), garbage, 0o600)
	s, rec, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rec.Quarantined == "" {
		t.Fatal("damaged database not reported")
	}
	kept, err := os.ReadFile(rec.Quarantined)
	if err != nil || !bytes.Equal(kept, garbage) {
		t.Fatalf("quarantined copy differs: %v", err)
	}
	if _, err := s.CreateConversation("fresh", ""); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsRefusedNotDestroyed(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := Open(dir)
	s.db.Exec("PRAGMA user_version = 99")
	s.Close()
	before, _ := os.ReadFile(filepath.Join(dir, DBName))
	if _, _, err := Open(dir); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open = %v, want ErrNewerSchema", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, DBName))
	if !bytes.Equal(before, after) {
		t.Fatal("newer database was modified")
	}
}

func TestInMemoryStore(t *testing.T) {
	s, _, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateConversation("scratch", "")
	a, err := s.PutBlob([]byte("x"), Attachment{Kind: "image"})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{ConversationID: c.ID, Role: "user", Attachments: []Attachment{a}}
	if err := s.Append(&m); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Messages(c.ID); len(got) != 1 {
		t.Fatalf("messages = %d", len(got))
	}
	tmp := s.tmpDir
	s.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("in-memory store left its blob folder behind")
	}
}

// FuzzOpen feeds arbitrary bytes as the database file: Open either works or
// quarantines, never panics, and the store it returns is usable.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("SQLite format 3\x00"))
	f.Add(append([]byte("SQLite format 3\x00\x10\x00\x01\x01\x00\x40\x20\x20"), make([]byte, 4000)...))
	f.Add(bytes.Repeat([]byte{0xff}, 4096))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, DBName), data, 0o600)
		s, _, err := Open(dir)
		if err != nil {
			if errors.Is(err, ErrNewerSchema) {
				return
			}
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		c, err := s.CreateConversation("after fuzz", "")
		if err != nil {
			t.Fatalf("store unusable: %v", err)
		}
		m := Message{ConversationID: c.ID, Role: "user", Text: "still here"}
		if err := s.Append(&m); err != nil {
			t.Fatalf("append: %v", err)
		}
	})
}
