package history

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool calls: an answer that called tools keeps, with its message (and
// with each of its versions), the rounds it took: what the model said
// before each round's calls, the calls (tool, server, arguments) and
// their outcomes. A reopened conversation shows them as cards, and the
// model is given them again as assistant turns with calls and tool turns.

// ToolRound is one round of calls an answer made.
type ToolRound struct {
	Text  string     `json:"text,omitempty"` // what the model said before calling
	Calls []ToolCall `json:"calls"`
}

// ToolCall is one call and its outcome.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`             // the name the model used
	Server    string          `json:"server,omitempty"` // "" when it named no offered tool
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Content   string          `json:"content"`
	IsError   bool            `json:"is_error,omitempty"`
	Denied    bool            `json:"denied,omitempty"`
	// Done: the outcome is in; a call without one was cut short (Esc,
	// or Perch quit) and reads as an error.
	Done bool `json:"done,omitempty"`
}

// maxToolsJSON bounds the stored rounds of one answer (results are
// already capped by the host; this bounds a misbehaving caller).
const maxToolsJSON = 8 << 20

// encodeTools is the tools column's value ("" for none).
func encodeTools(rounds []ToolRound) (string, error) {
	if len(rounds) == 0 {
		return "", nil
	}
	data, err := json.Marshal(rounds)
	if err != nil {
		return "", err
	}
	if len(data) > maxToolsJSON {
		return "", fmt.Errorf("history: the answer's tool calls are %d bytes (at most %d)", len(data), maxToolsJSON)
	}
	return string(data), nil
}

// decodeTools reads the tools column. A value this build cannot read
// (a damaged row) gives one round saying so, rather than losing the
// message.
func decodeTools(s string) []ToolRound {
	if s == "" {
		return nil
	}
	var out []ToolRound
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return []ToolRound{{Calls: []ToolCall{{Name: "?", Content: "this answer's tool calls could not be read: " + err.Error(), IsError: true, Done: true}}}}
	}
	return out
}

// SetToolServers records which MCP servers' tools a conversation offers
// the model (nil: the app's default, every enabled server).
func (s *Store) SetToolServers(id string, servers []string) error {
	var v any
	if servers != nil {
		data, err := json.Marshal(servers)
		if err != nil {
			return err
		}
		v = string(data)
	}
	return s.execOne(`UPDATE conversations SET tool_servers = ? WHERE id = ?`, v, id)
}

// ToolServers returns the servers a conversation offers (ok false: it
// never chose, the app's default applies).
func (s *Store) ToolServers(id string) (servers []string, ok bool, err error) {
	var v *string
	err = s.db.QueryRow(`SELECT tool_servers FROM conversations WHERE id = ?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("history: %w", err)
	}
	if v == nil {
		return nil, false, nil
	}
	if err := json.Unmarshal([]byte(*v), &servers); err != nil {
		return nil, false, nil // unreadable: the default
	}
	if servers == nil {
		servers = []string{}
	}
	return servers, true, nil
}
