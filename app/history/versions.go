package history

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// An answer can have several versions: each regeneration, and each edit of
// the answer's text, adds one. The messages row holds the version in use;
// message_versions keeps the others, so every reader of the conversation
// sees one answer per turn while the alternatives stay on record (for ◀ ▶,
// and as preference pairs for training).

// OriginEdited marks a version the user wrote by editing an answer
// (generated versions have Origin "").
const OriginEdited = "edited"

// ErrNoVersion is returned for a version number a message does not have.
var ErrNoVersion = errors.New("that version of the answer is no longer stored")

// NewVersion keeps the message's current version on record and makes m
// (its text, state, stats, origin) the message's newest version, in one
// transaction; m.Version and m.Versions are filled in.
func (s *Store) NewVersion(m *Message) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := archive(tx, m.ID); err != nil {
		return err
	}
	var top, n int
	if err := tx.QueryRow(`SELECT COALESCE(MAX(version), 0), COUNT(*) FROM message_versions WHERE message_id = ?`, m.ID).Scan(&top, &n); err != nil {
		return err
	}
	tools, err := encodeTools(m.Tools)
	if err != nil {
		return err
	}
	t := now()
	m.Version, m.Versions, m.Updated = top+1, n+1, fromMillis(t)
	if _, err := tx.Exec(`UPDATE messages SET text = ?, thinking = ?, state = ?, error = ?, model = ?,
		prompt_tokens = ?, gen_tokens = ?, ttft_ms = ?, elapsed_ms = ?, tok_per_s = ?, updated = ?,
		view_from = ?, media_from = ?, version = ?, origin = ?, tools = ? WHERE id = ?`,
		m.Text, m.Thinking, m.State, m.Error, m.Model, m.Stats.PromptTokens, m.Stats.GeneratedTokens,
		m.Stats.TimeToFirst.Milliseconds(), m.Stats.Elapsed.Milliseconds(), m.Stats.TokensPerSec, t,
		m.View.From, m.View.MediaFrom, m.Version, m.Origin, tools, m.ID); err != nil {
		return fmt.Errorf("history: new version: %w", err)
	}
	return tx.Commit()
}

// archive copies message id's current content into message_versions.
func archive(tx *sql.Tx, id string) error {
	res, err := tx.Exec(`INSERT INTO message_versions (message_id, version, origin, text, thinking, state, error, model,
		prompt_tokens, gen_tokens, ttft_ms, elapsed_ms, tok_per_s, view_from, media_from, created, updated, tools)
		SELECT id, version, origin, text, thinking, CASE state WHEN 'streaming' THEN 'interrupted' ELSE state END,
			error, model, prompt_tokens, gen_tokens, ttft_ms, elapsed_ms, tok_per_s, view_from, media_from, created, updated, tools
		FROM messages WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("history: keep version: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Versions returns every version of message id in order, the one in use
// included (its Version equals the message's).
func (s *Store) Versions(id string) ([]Message, error) {
	out, err := queryAll(s.db, "read versions", func(sc scanner) (Message, error) {
		m := Message{ID: id, Role: "assistant"}
		var ttft, elapsed, cr, up int64
		var tools string
		err := sc.Scan(&m.Version, &m.Origin, &m.Text, &m.Thinking, &m.State, &m.Error, &m.Model,
			&m.Stats.PromptTokens, &m.Stats.GeneratedTokens, &ttft, &elapsed, &m.Stats.TokensPerSec,
			&m.View.From, &m.View.MediaFrom, &cr, &up, &tools)
		m.Tools = decodeTools(tools)
		m.Stats.TimeToFirst = time.Duration(ttft) * time.Millisecond
		m.Stats.Elapsed = time.Duration(elapsed) * time.Millisecond
		m.Created, m.Updated = fromMillis(cr), fromMillis(up)
		return m, err
	}, `SELECT version, origin, text, thinking, state, error, model, prompt_tokens, gen_tokens,
			ttft_ms, elapsed_ms, tok_per_s, view_from, media_from, created, updated, tools FROM message_versions WHERE message_id = ?
		UNION ALL
		SELECT version, origin, text, thinking, state, error, model, prompt_tokens, gen_tokens,
			ttft_ms, elapsed_ms, tok_per_s, view_from, media_from, created, updated, tools FROM messages WHERE id = ?
		ORDER BY 1`, id, id)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	for i := range out {
		out[i].Versions = len(out)
	}
	return out, nil
}

// UseVersion makes version v of message id the one in use (the one the
// conversation shows and sends to the model); the current one is kept.
func (s *Store) UseVersion(id string, v int) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var cur int
	err = tx.QueryRow(`SELECT version FROM messages WHERE id = ?`, id).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil || cur == v {
		return err
	}
	var exists bool
	if err := tx.QueryRow(`SELECT COUNT(*) > 0 FROM message_versions WHERE message_id = ? AND version = ?`, id, v).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return ErrNoVersion
	}
	if err := archive(tx, id); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE messages SET (version, origin, text, thinking, state, error, model, prompt_tokens,
			gen_tokens, ttft_ms, elapsed_ms, tok_per_s, view_from, media_from, updated, tools) =
		(SELECT version, origin, text, thinking, state, error, model, prompt_tokens, gen_tokens, ttft_ms,
			elapsed_ms, tok_per_s, view_from, media_from, updated, tools FROM message_versions WHERE message_id = ? AND version = ?)
		WHERE id = ?`, id, v, id); err != nil {
		return fmt.Errorf("history: switch version: %w", err)
	}
	if _, err := tx.Exec(`DELETE FROM message_versions WHERE message_id = ? AND version = ?`, id, v); err != nil {
		return err
	}
	return tx.Commit()
}
