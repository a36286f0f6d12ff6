package history

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"perch/internal/contenthash"
	"perch/internal/durable"
)

// Attachment is a stored media file, as attached to a message.
type Attachment struct {
	SHA256   string // content address
	Name     string // the file name the user attached
	Kind     string // "image", "audio" or "video"
	MIME     string
	Size     int64
	Duration time.Duration
	Width    int
	Height   int
	Thumb    []byte // small PNG, or nil
}

// PutBlob stores data content-addressed (write, fsync, rename, fsync dir) and
// records its metadata; storing the same bytes twice is a no-op. It returns
// a with SHA256 and Size set. a.SHA256, when set, is data's content hash
// as the caller already made it (contenthash.Of): it is not hashed again.
func (s *Store) PutBlob(data []byte, a Attachment) (Attachment, error) {
	if a.SHA256 == "" {
		a.SHA256 = contenthash.Of(data)
	}
	a.Size = int64(len(data))
	path := s.BlobPath(a.SHA256)
	if _, err := os.Stat(path); err != nil {
		if err := durable.WriteFile(path, data, 0o700); err != nil {
			return a, fmt.Errorf("history: store %s: %w", a.Name, err)
		}
	}
	_, err := s.db.Exec(`INSERT INTO blobs (sha256, kind, mime, size, duration_ms, width, height, thumb, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(sha256) DO UPDATE SET created = excluded.created`,
		a.SHA256, a.Kind, a.MIME, a.Size, a.Duration.Milliseconds(), a.Width, a.Height, a.Thumb, now())
	if err != nil {
		return a, fmt.Errorf("history: record %s: %w", a.Name, err)
	}
	return a, nil
}

// BlobPath is where the bytes with this sha256 live.
func (s *Store) BlobPath(sha string) string {
	if len(sha) < 2 {
		sha = "__"
	}
	return filepath.Join(s.blobDir, sha[:2], sha)
}

// ReadBlob returns the stored bytes and checks them against their address.
func (s *Store) ReadBlob(sha string) ([]byte, error) {
	data, err := os.ReadFile(s.BlobPath(sha))
	if err != nil {
		return nil, fmt.Errorf("history: attachment %.12s is missing: %w", sha, err)
	}
	if contenthash.Of(data) != sha {
		return nil, fmt.Errorf("history: attachment %.12s is damaged on disk", sha)
	}
	return data, nil
}

// collectBlobs removes blobs no message uses that are older than minAge
// (younger ones may be attached to a message still being written).
func (s *Store) collectBlobs(minAge time.Duration) error {
	cutoff := now() - minAge.Milliseconds()
	rows, err := s.db.Query(`SELECT sha256 FROM blobs WHERE created < ?
		AND sha256 NOT IN (SELECT sha256 FROM attachments)`, cutoff)
	if err != nil {
		return err
	}
	var shas []string
	for rows.Next() {
		var sha string
		if err := rows.Scan(&sha); err != nil {
			rows.Close()
			return err
		}
		shas = append(shas, sha)
	}
	rows.Close()
	for _, sha := range shas {
		if _, err := s.db.Exec(`DELETE FROM blobs WHERE sha256 = ? AND sha256 NOT IN (SELECT sha256 FROM attachments)`, sha); err != nil {
			return err
		}
		os.Remove(s.BlobPath(sha))
	}
	return nil
}
