package history

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSearchFindsMessageTextWithSnippets(t *testing.T) {
	s := openT(t, t.TempDir())
	a, _ := s.CreateConversation("Trip to Lisbon", "")
	answerT(t, s, a.ID, "Where should we eat?", "Try the pastéis de nata near the river.")
	time.Sleep(2 * time.Millisecond)
	b, _ := s.CreateConversation("Go generics", "")
	answerT(t, s, b.ID, "How do type parameters work?", "They are written in square brackets.")
	time.Sleep(2 * time.Millisecond)
	c, _ := s.CreateConversation("Untitled", "")
	_, ans := answerT(t, s, c.ID, "hello", "streaming…")

	ids := func(q string) []string {
		t.Helper()
		ms, err := s.Conversations(q)
		if err != nil {
			t.Fatalf("Conversations(%q): %v", q, err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Title)
		}
		return out
	}
	same := func(q string, want ...string) {
		t.Helper()
		if got := ids(q); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("search %q = %q, want %q", q, got, want)
		}
	}
	same("", "Untitled", "Go generics", "Trip to Lisbon")
	same("lisb", "Trip to Lisbon")       // title substring
	same("pasteis", "Trip to Lisbon")    // message text, accents ignored
	same("SQUARE brack", "Go generics")  // every word, as prefixes, any case
	same("square lisbon")                // words must all be in one message or the title
	same(`"type" (param`, "Go generics") // FTS syntax characters are taken literally
	same("%")                            // LIKE wildcards are literal
	same(`"`)                            // a lone quote is not a syntax error
	same(strings.Repeat("ab ", 500))     // oversized queries are cut, not refused
	ms, _ := s.Conversations("nata")
	if len(ms) != 1 || !strings.Contains(ms[0].Snippet, "nata") {
		t.Fatalf("snippet = %+v", ms)
	}
	if ms, _ := s.Conversations("lisbon"); len(ms) != 1 || ms[0].Snippet != "" {
		t.Fatalf("a title match has no snippet: %+v", ms)
	}
	// The index follows updates (a streamed answer) and deletions.
	ans.Text = "a heron by the water"
	if err := s.Update(&ans); err != nil {
		t.Fatal(err)
	}
	same("heron", "Untitled")
	same("streaming")
	if err := s.DeleteConversation(c.ID); err != nil {
		t.Fatal(err)
	}
	same("heron")
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'heron'`).Scan(&n)
	if n != 0 {
		t.Fatalf("deleted message still indexed (%d hits)", n)
	}
}

// FuzzSearch: no query the user can type makes the search fail.
func FuzzSearch(f *testing.F) {
	s, _, err := Open("")
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	c, _ := s.CreateConversation("Birds", "")
	m := Message{ConversationID: c.ID, Role: "user", Text: "a robin on a wire"}
	s.Append(&m)
	for _, seed := range []string{"", "robin", `"`, `NEAR(a b)`, "a* OR -b", "col:text", "(", "^x", "\x00", "é ü"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := s.Conversations(q); err != nil {
			t.Fatalf("Conversations(%q): %v", q, err)
		}
	})
}

func TestMigrationIndexesExistingMessages(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBName)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(migrations[0] + `; PRAGMA user_version = 1;
		INSERT INTO conversations VALUES ('c1', 'Old chat', '', 1, 1);
		INSERT INTO messages (id, conversation_id, seq, role, text, state, created, updated)
			VALUES ('m1', 'c1', 1, 'user', 'an egret in the reeds', 'done', 1, 1);`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := openT(t, dir)
	ms, err := s.Conversations("egret")
	if err != nil || len(ms) != 1 || ms[0].ID != "c1" {
		t.Fatalf("search after migration = %+v, %v", ms, err)
	}
	msgs, _ := s.Messages("c1")
	if len(msgs) != 1 || msgs[0].Version != 1 || msgs[0].Versions != 1 || msgs[0].View.Trimmed() {
		t.Fatalf("migrated message = %+v", msgs)
	}
}
