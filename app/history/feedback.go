package history

import (
	"database/sql"
	"errors"
	"fmt"
)

// Feedback on answers: a rating per version of an answer (thumbs up +1,
// down -1), and which adapter each conversation answers with. Together
// with the answers' versions (regenerations, the user's corrections) they
// are the raw material of training data.

// VersionKey names one version of one message.
type VersionKey struct {
	MessageID string
	Version   int
}

// SetRating records the rating of a version of an assistant message; 0
// removes it.
func (s *Store) SetRating(messageID string, version, rating int) error {
	if rating < -1 || rating > 1 {
		return fmt.Errorf("history: rating %d is not -1, 0 or 1", rating)
	}
	var role string
	err := s.db.QueryRow(`SELECT role FROM messages WHERE id = ?`, messageID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if role != "assistant" {
		return errors.New("history: only answers take ratings")
	}
	if rating == 0 {
		_, err = s.db.Exec(`DELETE FROM feedback WHERE message_id = ? AND version = ?`, messageID, version)
	} else {
		_, err = s.db.Exec(`INSERT INTO feedback (message_id, version, rating, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT(message_id, version) DO UPDATE SET rating = excluded.rating, updated = excluded.updated`,
			messageID, version, rating, now())
	}
	if err != nil {
		return fmt.Errorf("history: save rating: %w", err)
	}
	return nil
}

// Ratings returns the ratings of every version of every answer in a
// conversation.
func (s *Store) Ratings(conversationID string) (map[VersionKey]int, error) {
	rows, err := s.db.Query(`SELECT f.message_id, f.version, f.rating FROM feedback f
		JOIN messages m ON m.id = f.message_id WHERE m.conversation_id = ?`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("history: read ratings: %w", err)
	}
	defer rows.Close()
	out := map[VersionKey]int{}
	for rows.Next() {
		var k VersionKey
		var r int
		if err := rows.Scan(&k.MessageID, &k.Version, &r); err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, rows.Err()
}

// Taught is an answer the user said something about: a rating on one of
// its versions, or a version they wrote.
type Taught struct {
	ConversationID string
	MessageID      string
	Seq            int
}

// TaughtAnswers lists every answer with a rating or an edited version,
// oldest conversation first, in turn order.
func (s *Store) TaughtAnswers() ([]Taught, error) {
	return queryAll(s.db, "read feedback", func(sc scanner) (Taught, error) {
		var t Taught
		err := sc.Scan(&t.ConversationID, &t.MessageID, &t.Seq)
		return t, err
	}, `SELECT m.conversation_id, m.id, m.seq FROM messages m
		JOIN conversations c ON c.id = m.conversation_id
		WHERE m.role = 'assistant' AND (
			EXISTS (SELECT 1 FROM feedback f WHERE f.message_id = m.id)
			OR m.origin = ? OR EXISTS (SELECT 1 FROM message_versions v WHERE v.message_id = m.id AND v.origin = ?))
		ORDER BY c.created, m.seq`, OriginEdited, OriginEdited)
}

// ConversationAdapter is the adapter a conversation answers with ("" the
// base model). A conversation that never chose takes def, and keeps it.
func (s *Store) ConversationAdapter(id, def string) (string, error) {
	var a sql.NullString
	err := s.db.QueryRow(`SELECT adapter FROM conversations WHERE id = ?`, id).Scan(&a)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if a.Valid {
		return a.String, nil
	}
	if _, err := s.db.Exec(`UPDATE conversations SET adapter = ? WHERE id = ? AND adapter IS NULL`, def, id); err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	return s.ConversationAdapter(id, def)
}

// SetConversationAdapter sets the adapter a conversation answers with.
func (s *Store) SetConversationAdapter(id, adapter string) error {
	return s.execOne(`UPDATE conversations SET adapter = ? WHERE id = ?`, adapter, id)
}
