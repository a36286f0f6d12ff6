package history

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Adapter is an adapter in the user's library: its files live in Dir
// (mlx-lm's adapters.safetensors and adapter_config.json).
type Adapter struct {
	ID, Name, Dir  string
	Base, BaseName string // the model it was made for
	Method         string // "" for an imported adapter of unknown making
	Rank, Steps    int
	BestVal        float64 // NaN when unknown
	BestStep       int
	RunID          string
	Created        time.Time
}

// PutAdapter records a (or replaces the record with a.ID) and fills in
// a.ID and a.Created.
func (s *Store) PutAdapter(a *Adapter) error {
	if a.ID == "" {
		a.ID = newID()
	}
	if a.Created.IsZero() {
		a.Created = fromMillis(now())
	}
	_, err := s.db.Exec(`INSERT INTO adapters (id, name, dir, base, base_name, method, rank, steps, best_val, best_step, run_id, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, dir = excluded.dir,
		base = excluded.base, base_name = excluded.base_name, method = excluded.method, rank = excluded.rank,
		steps = excluded.steps, best_val = excluded.best_val, best_step = excluded.best_step, run_id = excluded.run_id`,
		a.ID, a.Name, a.Dir, a.Base, a.BaseName, a.Method, a.Rank, a.Steps, nullable(a.BestVal), a.BestStep, a.RunID,
		a.Created.UnixMilli())
	if err != nil {
		return fmt.Errorf("history: record adapter: %w", err)
	}
	return nil
}

const adapterColumns = `id, name, dir, base, base_name, method, rank, steps, best_val, best_step, run_id, created`

func scanAdapter(sc scanner) (Adapter, error) {
	var a Adapter
	var best sql.NullFloat64
	var cr int64
	err := sc.Scan(&a.ID, &a.Name, &a.Dir, &a.Base, &a.BaseName, &a.Method, &a.Rank, &a.Steps, &best, &a.BestStep, &a.RunID, &cr)
	a.BestVal, a.Created = orNaN(best), fromMillis(cr)
	return a, err
}

// Adapters lists the library, newest first.
func (s *Store) Adapters() ([]Adapter, error) {
	return queryAll(s.db, "list adapters", scanAdapter, `SELECT `+adapterColumns+` FROM adapters ORDER BY created DESC, name`)
}

// AdapterByID returns one adapter.
func (s *Store) AdapterByID(id string) (Adapter, error) {
	a, err := scanAdapter(s.db.QueryRow(`SELECT `+adapterColumns+` FROM adapters WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNotFound
	}
	return a, err
}

// RenameAdapter sets an adapter's name.
func (s *Store) RenameAdapter(id, name string) error {
	return s.execOne(`UPDATE adapters SET name = ? WHERE id = ?`, name, id)
}

// DeleteAdapter forgets an adapter; conversations that used it go back to
// the base model. The caller removes its files.
func (s *Store) DeleteAdapter(id string) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`DELETE FROM adapters WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("history: delete adapter: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if _, err := tx.Exec(`UPDATE conversations SET adapter = '' WHERE adapter = ?`, id); err != nil {
		return err
	}
	return tx.Commit()
}
