// Package history owns Perch's one SQLite database (WAL, synchronous
// FULL) and the attachment folder beside it: the schema and its
// migrations, recovery at Open, and typed reads and writes of every table
// — conversations and messages with their versions (regenerations,
// corrections), attachments (bytes content-addressed by sha256 in the
// folder), full-text search, feedback (ratings, a conversation's
// adapter), an answer's tool rounds, and Teach's runs (metrics,
// checkpoints) and adapter library records. It is one concern because it
// is one file: every table shares one migration sequence, one connection
// and its transactions (deleting a conversation takes its versions and
// feedback with it; deleting an adapter takes it off the conversations
// that used it, in one transaction), so splitting it by table would split
// the schema, not the work. Callers hold typed values and never see SQL.
//
// A message the user sent is committed before generation starts; a
// partial answer is saved as it streams and is marked interrupted at the
// next Open if the process died.
package history

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DBName is the database file inside the data folder.
const DBName = "history.db"

// ErrNewerSchema means the database was written by a newer Perch.
var ErrNewerSchema = errors.New("history was written by a newer version of Perch; update Perch to open it")

// ErrNotFound is returned for an unknown conversation or message id.
var ErrNotFound = errors.New("not found")

// Store is the chat history. Its methods are safe for concurrent use.
type Store struct {
	db      *sql.DB
	blobDir string
	tmpDir  string // in-memory stores keep blobs here and remove it on Close
}

// Recovery says what Open had to repair.
type Recovery struct {
	// Quarantined is where a damaged database was moved ("" if none).
	Quarantined string
	// Interrupted counts answers that were streaming when Perch last stopped.
	Interrupted int
}

// Open opens (creating if needed) the history in dir. A database that SQLite
// cannot read is moved aside to Recovery.Quarantined and a new one started.
// dir "" opens a throwaway in-memory store.
func Open(dir string) (*Store, Recovery, error) {
	var rec Recovery
	if dir == "" {
		tmp, err := os.MkdirTemp("", "perch-history-")
		if err != nil {
			return nil, rec, err
		}
		s, err := openDB("file::memory:", tmp)
		if err != nil {
			os.RemoveAll(tmp)
			return nil, rec, err
		}
		s.tmpDir = tmp
		return s, rec, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "attachments"), 0o700); err != nil {
		return nil, rec, fmt.Errorf("history: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, DBName)
	s, err := openDB(dsn(path), filepath.Join(dir, "attachments"))
	if err != nil && !errors.Is(err, ErrNewerSchema) && isCorrupt(err) {
		q, qerr := quarantine(path)
		if qerr != nil {
			return nil, rec, fmt.Errorf("history: %v; moving it aside failed: %w", err, qerr)
		}
		rec.Quarantined = q
		s, err = openDB(dsn(path), filepath.Join(dir, "attachments"))
	}
	if err != nil {
		return nil, rec, fmt.Errorf("history: open %s: %w", path, err)
	}
	n, err := s.recover()
	if err != nil {
		s.Close()
		return nil, rec, err
	}
	rec.Interrupted = n
	return s, rec, nil
}

func dsn(path string) string {
	q := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	q += fullfsyncPragmas // macOS: fsync really reaches the disk
	return "file:" + path + "?" + q
}

func openDB(dsn, blobDir string) (*Store, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// One connection: writes are serialised and ":memory:" stays one database.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, blobDir: blobDir}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	var check string
	if err := db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil {
		db.Close()
		return nil, err
	}
	if check != "ok" {
		db.Close()
		return nil, fmt.Errorf("database disk image is malformed: %s", check)
	}
	return s, nil
}

// isCorrupt reports whether err says the file is not a usable SQLite database.
func isCorrupt(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"malformed", "not a database", "corrupt", "file is encrypted", "unsupported file format"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// quarantine moves the database and its WAL files aside, never overwriting.
func quarantine(path string) (string, error) {
	dst := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	for _, ext := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + ext); err == nil {
			if err := os.Rename(path+ext, dst+ext); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// recover marks answers left streaming by a dead process and removes
// half-written attachment files.
func (s *Store) recover() (int, error) {
	res, err := s.db.Exec(`UPDATE messages SET state = ? WHERE state = ?`, Interrupted, Streaming)
	if err != nil {
		return 0, fmt.Errorf("history: mark interrupted answers: %w", err)
	}
	n, _ := res.RowsAffected()
	tmps, _ := filepath.Glob(filepath.Join(s.blobDir, "*", "*.tmp"))
	for _, t := range tmps {
		os.Remove(t)
	}
	return int(n), nil
}

// Close closes the database.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.tmpDir != "" {
		os.RemoveAll(s.tmpDir)
	}
	return err
}

// IntegrityCheck runs PRAGMA integrity_check and returns its first line.
func (s *Store) IntegrityCheck() (string, error) {
	var r string
	err := s.db.QueryRow("PRAGMA integrity_check").Scan(&r)
	return r, err
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms) }
