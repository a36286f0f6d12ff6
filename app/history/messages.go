package history

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// State of a stored message.
type State string

const (
	Done        State = "done"        // complete
	Streaming   State = "streaming"   // being generated now
	Stopped     State = "stopped"     // the user pressed stop
	Interrupted State = "interrupted" // Perch quit or crashed mid-answer
	Failed      State = "failed"      // generation returned an error
)

// Conversation is one chat thread.
type Conversation struct {
	ID      string
	Title   string
	Model   string
	Created time.Time
	Updated time.Time
	// TrimOK: the user agreed to leave the oldest turns out when the
	// conversation no longer fits the model's context.
	TrimOK bool
}

// Stats are an answer's generation numbers.
type Stats struct {
	PromptTokens    int
	GeneratedTokens int
	TimeToFirst     time.Duration
	Elapsed         time.Duration
	TokensPerSec    float64
}

// Message is one turn.
type Message struct {
	ID             string
	ConversationID string
	Seq            int
	Role           string // "user" or "assistant"
	Text           string
	Thinking       string
	State          State
	Error          string // in words, then the raw error (JoinError)
	Model          string
	Stats          Stats
	Attachments    []Attachment
	// Version numbers an answer's versions from 1 (regenerations, edits);
	// Versions is how many it has (read by Messages; at least 1). Origin
	// says where this version came from ("" generated, OriginEdited).
	Version  int
	Versions int
	Origin   string
	// View is what of the conversation the model saw for this answer.
	View View
	// Tools are the rounds of tool calls the answer made before its Text.
	Tools   []ToolRound
	Created time.Time
	Updated time.Time
}

// View describes the part of a conversation a model was given: messages
// before seq From were left out, and those before MediaFrom lost their
// attachments (0: nothing left out).
type View struct{ From, MediaFrom int }

// Trimmed reports whether anything was left out.
func (v View) Trimmed() bool { return v.From > 0 || v.MediaFrom > 0 }

// CreateConversation starts a conversation.
func (s *Store) CreateConversation(title, model string) (Conversation, error) {
	t := now()
	c := Conversation{ID: newID(), Title: title, Model: model, Created: fromMillis(t), Updated: fromMillis(t)}
	_, err := s.db.Exec(`INSERT INTO conversations (id, title, model, created, updated) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.Title, c.Model, t, t)
	if err != nil {
		return Conversation{}, fmt.Errorf("history: create conversation: %w", err)
	}
	return c, nil
}

// Rename sets a conversation's title.
func (s *Store) Rename(id, title string) error {
	return s.execOne(`UPDATE conversations SET title = ? WHERE id = ?`, title, id)
}

// SetTrimOK records whether the user agreed to leave the oldest turns of a
// conversation out when it no longer fits the model's context.
func (s *Store) SetTrimOK(id string, ok bool) error {
	return s.execOne(`UPDATE conversations SET trim_ok = ? WHERE id = ?`, ok, id)
}

// SetModel records the model a conversation last used.
func (s *Store) SetModel(id, model string) error {
	return s.execOne(`UPDATE conversations SET model = ? WHERE id = ?`, model, id)
}

// DeleteConversation removes a conversation, its messages and any attachment
// bytes no other message uses.
func (s *Store) DeleteConversation(id string) error {
	if err := s.execOne(`DELETE FROM conversations WHERE id = ?`, id); err != nil {
		return err
	}
	return s.collectBlobs(time.Hour)
}

// Conversation returns one conversation.
func (s *Store) Conversation(id string) (Conversation, error) {
	var c Conversation
	var cr, up int64
	err := s.db.QueryRow(`SELECT id, title, model, created, updated, trim_ok FROM conversations WHERE id = ?`, id).
		Scan(&c.ID, &c.Title, &c.Model, &cr, &up, &c.TrimOK)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	c.Created, c.Updated = fromMillis(cr), fromMillis(up)
	return c, err
}

// Append stores m at the end of its conversation in one durable transaction
// and fills in m.ID, m.Seq, m.Created. Attachments must already be stored
// with PutBlob.
func (s *Store) Append(m *Message) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var seq int
	if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?`, m.ConversationID).Scan(&seq); err != nil {
		return err
	}
	t := now()
	m.ID, m.Seq, m.Created, m.Updated = newID(), seq, fromMillis(t), fromMillis(t)
	if m.State == "" {
		m.State = Done
	}
	m.Version, m.Versions = 1, 1
	tools, err := encodeTools(m.Tools)
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO messages (id, conversation_id, seq, role, text, thinking, state, error, model,
		prompt_tokens, gen_tokens, ttft_ms, elapsed_ms, tok_per_s, created, updated, origin, view_from, media_from, tools)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.ConversationID, seq, m.Role, m.Text, m.Thinking, m.State, m.Error, m.Model,
		m.Stats.PromptTokens, m.Stats.GeneratedTokens, m.Stats.TimeToFirst.Milliseconds(),
		m.Stats.Elapsed.Milliseconds(), m.Stats.TokensPerSec, t, t, m.Origin, m.View.From, m.View.MediaFrom, tools)
	if err != nil {
		return fmt.Errorf("history: save message: %w", err)
	}
	for i, a := range m.Attachments {
		if _, err := tx.Exec(`INSERT INTO attachments (message_id, ord, sha256, name) VALUES (?, ?, ?, ?)`,
			m.ID, i, a.SHA256, a.Name); err != nil {
			return fmt.Errorf("history: save attachment %s: %w", a.Name, err)
		}
	}
	if err := touch(tx, m.ConversationID, t); err != nil {
		return err
	}
	return tx.Commit()
}

// Update rewrites a message's generated content and state (partial saves
// while streaming, and the final save).
func (s *Store) Update(m *Message) error {
	tools, err := encodeTools(m.Tools)
	if err != nil {
		return err
	}
	t := now()
	m.Updated = fromMillis(t)
	return s.execOne(`UPDATE messages SET text = ?, thinking = ?, state = ?, error = ?, model = ?,
		prompt_tokens = ?, gen_tokens = ?, ttft_ms = ?, elapsed_ms = ?, tok_per_s = ?, updated = ?,
		view_from = ?, media_from = ?, tools = ? WHERE id = ?`,
		m.Text, m.Thinking, m.State, m.Error, m.Model, m.Stats.PromptTokens, m.Stats.GeneratedTokens,
		m.Stats.TimeToFirst.Milliseconds(), m.Stats.Elapsed.Milliseconds(), m.Stats.TokensPerSec, t,
		m.View.From, m.View.MediaFrom, tools, m.ID)
}

// TruncateAfter deletes every message of the conversation after seq
// (regenerate and edit-and-resend replace the tail).
func (s *Store) TruncateAfter(conversationID string, seq int) error {
	_, err := s.db.Exec(`DELETE FROM messages WHERE conversation_id = ? AND seq > ?`, conversationID, seq)
	return err
}

// DeleteRange deletes the conversation's messages with from <= seq <= to.
func (s *Store) DeleteRange(conversationID string, from, to int) error {
	_, err := s.db.Exec(`DELETE FROM messages WHERE conversation_id = ? AND seq BETWEEN ? AND ?`, conversationID, from, to)
	return err
}

// Messages returns a conversation's messages in order, with attachments.
func (s *Store) Messages(conversationID string) ([]Message, error) {
	rows, err := s.db.Query(`SELECT id, seq, role, text, thinking, state, error, model, prompt_tokens, gen_tokens,
		ttft_ms, elapsed_ms, tok_per_s, created, updated, version, origin, view_from, media_from, tools,
		1 + (SELECT COUNT(*) FROM message_versions v WHERE v.message_id = messages.id)
		FROM messages WHERE conversation_id = ? ORDER BY seq`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("history: read messages: %w", err)
	}
	var out []Message
	idx := map[string]int{}
	for rows.Next() {
		m := Message{ConversationID: conversationID}
		var ttft, elapsed, cr, up int64
		var tools string
		if err := rows.Scan(&m.ID, &m.Seq, &m.Role, &m.Text, &m.Thinking, &m.State, &m.Error, &m.Model,
			&m.Stats.PromptTokens, &m.Stats.GeneratedTokens, &ttft, &elapsed, &m.Stats.TokensPerSec, &cr, &up,
			&m.Version, &m.Origin, &m.View.From, &m.View.MediaFrom, &tools, &m.Versions); err != nil {
			rows.Close()
			return nil, err
		}
		m.Tools = decodeTools(tools)
		m.Stats.TimeToFirst = time.Duration(ttft) * time.Millisecond
		m.Stats.Elapsed = time.Duration(elapsed) * time.Millisecond
		m.Created, m.Updated = fromMillis(cr), fromMillis(up)
		idx[m.ID] = len(out)
		out = append(out, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	arows, err := s.db.Query(`SELECT a.message_id, a.name, b.sha256, b.kind, b.mime, b.size, b.duration_ms, b.width, b.height, b.thumb
		FROM attachments a JOIN blobs b ON a.sha256 = b.sha256 JOIN messages m ON m.id = a.message_id
		WHERE m.conversation_id = ? ORDER BY m.seq, a.ord`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("history: read attachments: %w", err)
	}
	defer arows.Close()
	for arows.Next() {
		var id string
		var a Attachment
		var dur int64
		if err := arows.Scan(&id, &a.Name, &a.SHA256, &a.Kind, &a.MIME, &a.Size, &dur, &a.Width, &a.Height, &a.Thumb); err != nil {
			return nil, err
		}
		a.Duration = time.Duration(dur) * time.Millisecond
		if i, ok := idx[id]; ok {
			out[i].Attachments = append(out[i].Attachments, a)
		}
	}
	return out, arows.Err()
}

func (s *Store) execOne(q string, args ...any) error {
	res, err := s.db.Exec(q, args...)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func touch(tx *sql.Tx, conversationID string, t int64) error {
	res, err := tx.Exec(`UPDATE conversations SET updated = ? WHERE id = ?`, t, conversationID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("history: conversation %s: %w", conversationID, ErrNotFound)
	}
	return nil
}

// errorDetailSep parts an Error's words from the raw error behind them.
const errorDetailSep = "\n\x1f"

// JoinError is what Message.Error holds: the failure in words, and the raw
// error for a Details disclosure.
func JoinError(summary, details string) string {
	if details == "" || details == summary {
		return summary
	}
	return summary + errorDetailSep + details
}

// SplitError takes a Message.Error apart.
func SplitError(s string) (summary, details string) {
	summary, details, _ = strings.Cut(s, errorDetailSep)
	return summary, details
}
