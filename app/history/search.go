package history

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Message text is indexed by SQLite FTS5 (messages_fts, kept in step by
// triggers, keyed by the messages table's rowid: a VACUUM would renumber
// rowids, so one must be followed by INSERT INTO messages_fts(messages_fts)
// VALUES ('rebuild')).

// maxQuery bounds a search query (a paste into the search box).
const maxQuery = 200

// Match is a listed conversation and, when its messages matched a search,
// a short excerpt of the newest matching one.
type Match struct {
	Conversation
	Snippet string
}

// Conversations lists conversations, newest first, whose title contains
// query (case-insensitive) or whose messages contain every word of it
// (word prefixes; accents ignored). "" lists all.
func (s *Store) Conversations(query string) ([]Match, error) {
	query = strings.TrimSpace(query)
	if len(query) > maxQuery {
		query = query[:maxQuery]
		for !utf8.ValidString(query) {
			query = query[:len(query)-1]
		}
	}
	match := ftsQuery(query)
	if match == "" {
		match = `""` // matches nothing
	}
	rows, err := s.db.Query(`WITH hits AS (
			SELECT m.conversation_id AS cid, m.seq AS seq,
				snippet(messages_fts, 0, '', '', '…', 10) AS snip
			FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
			WHERE ? != '' AND messages_fts MATCH ?)
		SELECT c.id, c.title, c.model, c.created, c.updated, c.trim_ok,
			COALESCE((SELECT snip FROM hits WHERE cid = c.id ORDER BY seq DESC LIMIT 1), '')
		FROM conversations c
		WHERE ? = '' OR c.title LIKE ? ESCAPE '\' OR c.id IN (SELECT cid FROM hits)
		ORDER BY c.updated DESC, c.created DESC`,
		query, match, query, "%"+escapeLike(query)+"%")
	if err != nil {
		return nil, fmt.Errorf("history: search conversations: %w", err)
	}
	defer rows.Close()
	var out []Match
	for rows.Next() {
		var c Match
		var cr, up int64
		if err := rows.Scan(&c.ID, &c.Title, &c.Model, &cr, &up, &c.TrimOK, &c.Snippet); err != nil {
			return nil, err
		}
		c.Created, c.Updated = fromMillis(cr), fromMillis(up)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ftsQuery turns what the user typed into an FTS5 query: every word must
// appear, each as a prefix, with FTS syntax characters taken literally.
func ftsQuery(q string) string {
	q = strings.Map(func(r rune) rune {
		if r < ' ' || r == utf8.RuneError || r == 0x7f {
			return ' ' // SQLite's FTS parser stops at NUL; control bytes are no words
		}
		return r
	}, q)
	var terms []string
	for _, w := range strings.Fields(q) {
		w = strings.ReplaceAll(w, `"`, `""`)
		terms = append(terms, `"`+w+`"*`)
	}
	return strings.Join(terms, " ")
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
