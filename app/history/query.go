package history

import (
	"database/sql"
	"fmt"
)

// scanner is one row being read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// queryAll runs query and reads every row with scan, in order; what names
// the list in the error ("list runs").
func queryAll[T any](db *sql.DB, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
