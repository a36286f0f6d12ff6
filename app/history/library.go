package history

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// OpenLibrary opens the history in dir only to read it alongside the app
// (perch serve offers the Teach library's adapters): nothing is created,
// migrated, recovered or moved aside. A folder without a history is an
// error that wraps fs.ErrNotExist.
func OpenLibrary(dir string) (*Store, error) {
	path := filepath.Join(dir, DBName)
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("history: %s is not a file", path)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &Store{db: db, blobDir: filepath.Join(dir, "attachments")}, nil
}
