package history

import "fmt"

// migrations[i] moves the schema from version i to i+1 (PRAGMA user_version).
// Append only; never edit a migration that has shipped.
var migrations = []string{
	`CREATE TABLE conversations (
		id      TEXT PRIMARY KEY,
		title   TEXT NOT NULL,
		model   TEXT NOT NULL DEFAULT '',
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL
	);
	CREATE INDEX conversations_updated ON conversations(updated DESC);
	CREATE TABLE messages (
		id              TEXT PRIMARY KEY,
		conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
		seq             INTEGER NOT NULL,
		role            TEXT NOT NULL,
		text            TEXT NOT NULL DEFAULT '',
		thinking        TEXT NOT NULL DEFAULT '',
		state           TEXT NOT NULL,
		error           TEXT NOT NULL DEFAULT '',
		model           TEXT NOT NULL DEFAULT '',
		prompt_tokens   INTEGER NOT NULL DEFAULT 0,
		gen_tokens      INTEGER NOT NULL DEFAULT 0,
		ttft_ms         INTEGER NOT NULL DEFAULT 0,
		elapsed_ms      INTEGER NOT NULL DEFAULT 0,
		tok_per_s       REAL NOT NULL DEFAULT 0,
		created         INTEGER NOT NULL,
		updated         INTEGER NOT NULL,
		UNIQUE (conversation_id, seq)
	);
	CREATE TABLE blobs (
		sha256      TEXT PRIMARY KEY,
		kind        TEXT NOT NULL,
		mime        TEXT NOT NULL DEFAULT '',
		size        INTEGER NOT NULL,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		width       INTEGER NOT NULL DEFAULT 0,
		height      INTEGER NOT NULL DEFAULT 0,
		thumb       BLOB,
		created     INTEGER NOT NULL
	);
	CREATE TABLE attachments (
		message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
		ord        INTEGER NOT NULL,
		sha256     TEXT NOT NULL REFERENCES blobs(sha256),
		name       TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (message_id, ord)
	);
	CREATE INDEX attachments_sha ON attachments(sha256);`,

	// 2: answer versions (regenerations, later edits), what each answer's
	// model saw of the conversation, per-conversation consent to leave old
	// turns out, and full-text search over message text.
	`ALTER TABLE messages ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
	ALTER TABLE messages ADD COLUMN origin TEXT NOT NULL DEFAULT '';
	ALTER TABLE messages ADD COLUMN view_from INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE messages ADD COLUMN media_from INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE conversations ADD COLUMN trim_ok INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE message_versions (
		message_id    TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
		version       INTEGER NOT NULL,
		origin        TEXT NOT NULL DEFAULT '',
		text          TEXT NOT NULL DEFAULT '',
		thinking      TEXT NOT NULL DEFAULT '',
		state         TEXT NOT NULL,
		error         TEXT NOT NULL DEFAULT '',
		model         TEXT NOT NULL DEFAULT '',
		prompt_tokens INTEGER NOT NULL DEFAULT 0,
		gen_tokens    INTEGER NOT NULL DEFAULT 0,
		ttft_ms       INTEGER NOT NULL DEFAULT 0,
		elapsed_ms    INTEGER NOT NULL DEFAULT 0,
		tok_per_s     REAL NOT NULL DEFAULT 0,
		view_from     INTEGER NOT NULL DEFAULT 0,
		media_from    INTEGER NOT NULL DEFAULT 0,
		created       INTEGER NOT NULL,
		updated       INTEGER NOT NULL,
		PRIMARY KEY (message_id, version)
	);
	CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', content_rowid='rowid',
		tokenize='unicode61 remove_diacritics 2');
	INSERT INTO messages_fts(rowid, text) SELECT rowid, text FROM messages;
	CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
		INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
	END;
	CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
		INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
	END;
	CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages WHEN old.text IS NOT new.text BEGIN
		INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
		INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
	END;`,

	// 3: teaching — ratings of answer versions, each conversation's adapter
	// (NULL until first used: it then takes the app's current choice), the
	// adapter library, and training runs with their metrics and checkpoints.
	`CREATE TABLE feedback (
		message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
		version    INTEGER NOT NULL,
		rating     INTEGER NOT NULL,
		updated    INTEGER NOT NULL,
		PRIMARY KEY (message_id, version)
	);
	ALTER TABLE conversations ADD COLUMN adapter TEXT;
	UPDATE conversations SET adapter = '';
	CREATE TABLE adapters (
		id        TEXT PRIMARY KEY,
		name      TEXT NOT NULL,
		dir       TEXT NOT NULL,
		base      TEXT NOT NULL,
		base_name TEXT NOT NULL DEFAULT '',
		method    TEXT NOT NULL DEFAULT '',
		rank      INTEGER NOT NULL DEFAULT 0,
		steps     INTEGER NOT NULL DEFAULT 0,
		best_val  REAL,
		best_step INTEGER NOT NULL DEFAULT 0,
		run_id    TEXT NOT NULL DEFAULT '',
		created   INTEGER NOT NULL
	);
	CREATE TABLE train_runs (
		id         TEXT PRIMARY KEY,
		name       TEXT NOT NULL,
		base       TEXT NOT NULL,
		base_name  TEXT NOT NULL DEFAULT '',
		method     TEXT NOT NULL,
		plan       TEXT NOT NULL,
		dir        TEXT NOT NULL,
		state      TEXT NOT NULL,
		step       INTEGER NOT NULL DEFAULT 0,
		steps      INTEGER NOT NULL DEFAULT 0,
		error      TEXT NOT NULL DEFAULT '',
		best_val   REAL,
		best_step  INTEGER NOT NULL DEFAULT 0,
		tok_per_s  REAL NOT NULL DEFAULT 0,
		adapter_id TEXT NOT NULL DEFAULT '',
		created    INTEGER NOT NULL,
		updated    INTEGER NOT NULL
	);
	CREATE TABLE train_metrics (
		run_id   TEXT NOT NULL REFERENCES train_runs(id) ON DELETE CASCADE,
		step     INTEGER NOT NULL,
		loss     REAL,
		val_loss REAL,
		margin   REAL,
		tokens   INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (run_id, step)
	);
	CREATE TABLE train_checkpoints (
		run_id   TEXT NOT NULL REFERENCES train_runs(id) ON DELETE CASCADE,
		step     INTEGER NOT NULL,
		path     TEXT NOT NULL,
		val_loss REAL,
		created  INTEGER NOT NULL,
		PRIMARY KEY (run_id, step)
	);`,

	// 4: tools — the calls an answer made and their results (JSON, with
	// the message and with each kept version), and which MCP servers'
	// tools a conversation offers (NULL: the app's default).
	`ALTER TABLE messages ADD COLUMN tools TEXT NOT NULL DEFAULT '';
	ALTER TABLE message_versions ADD COLUMN tools TEXT NOT NULL DEFAULT '';
	ALTER TABLE conversations ADD COLUMN tool_servers TEXT;`,
}

// SchemaVersion is the version this build writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate() error {
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w (schema %d, this build knows %d)", ErrNewerSchema, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate history to schema %d: %w", v+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
