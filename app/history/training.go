package history

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// Training runs, their metrics and checkpoints. A run's row is written
// when it starts and as its state changes; metrics arrive in batches; a
// checkpoint is recorded only once its files are complete on disk, so
// every recorded checkpoint loads.

// Run states as stored (ui.RunState spells the same words).
const (
	RunPreparing   = "preparing"
	RunTraining    = "training"
	RunPaused      = "paused"
	RunDone        = "done"
	RunFailed      = "failed"
	RunStopped     = "stopped"
	RunInterrupted = "interrupted"
)

// TrainRun is one run's record.
type TrainRun struct {
	ID, Name, Base, BaseName, Method string
	Plan                             string // the plan as JSON
	Dir                              string // the run's adapter folder
	State                            string
	Step, Steps                      int
	Error                            string
	BestVal                          float64 // NaN until validated
	BestStep                         int
	TokensPerSec                     float64
	AdapterID                        string
	Created, Updated                 time.Time
}

// Metric is one step's numbers; NaN where not measured.
type Metric struct {
	Step                  int
	Loss, ValLoss, Margin float64
	Tokens                int
}

// Checkpoint is a complete checkpoint of a run.
type Checkpoint struct {
	Step    int
	Path    string
	ValLoss float64
	Created time.Time
}

func nullable(v float64) sql.NullFloat64 {
	return sql.NullFloat64{Float64: v, Valid: !math.IsNaN(v) && !math.IsInf(v, 0)}
}

func orNaN(v sql.NullFloat64) float64 {
	if v.Valid {
		return v.Float64
	}
	return math.NaN()
}

// CreateRun records a new run and fills in r.ID, r.Created.
func (s *Store) CreateRun(r *TrainRun) error {
	t := now()
	if r.ID == "" {
		r.ID = newID()
	}
	r.Created, r.Updated = fromMillis(t), fromMillis(t)
	_, err := s.db.Exec(`INSERT INTO train_runs (id, name, base, base_name, method, plan, dir, state, step, steps,
		error, best_val, best_step, tok_per_s, adapter_id, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Name, r.Base, r.BaseName, r.Method, r.Plan, r.Dir, r.State, r.Step, r.Steps, r.Error,
		nullable(r.BestVal), r.BestStep, r.TokensPerSec, r.AdapterID, t, t)
	if err != nil {
		return fmt.Errorf("history: record run: %w", err)
	}
	return nil
}

// UpdateRun rewrites a run's progress and state.
func (s *Store) UpdateRun(r *TrainRun) error {
	t := now()
	r.Updated = fromMillis(t)
	return s.execOne(`UPDATE train_runs SET name = ?, state = ?, step = ?, steps = ?, error = ?, best_val = ?, best_step = ?,
		tok_per_s = ?, adapter_id = ?, plan = ?, updated = ? WHERE id = ?`,
		r.Name, r.State, r.Step, r.Steps, r.Error, nullable(r.BestVal), r.BestStep, r.TokensPerSec, r.AdapterID, r.Plan, t, r.ID)
}

const runColumns = `id, name, base, base_name, method, plan, dir, state, step, steps, error, best_val, best_step,
	tok_per_s, adapter_id, created, updated`

func scanRun(sc scanner) (TrainRun, error) {
	var r TrainRun
	var best sql.NullFloat64
	var cr, up int64
	err := sc.Scan(&r.ID, &r.Name, &r.Base, &r.BaseName, &r.Method, &r.Plan, &r.Dir, &r.State, &r.Step, &r.Steps,
		&r.Error, &best, &r.BestStep, &r.TokensPerSec, &r.AdapterID, &cr, &up)
	r.BestVal, r.Created, r.Updated = orNaN(best), fromMillis(cr), fromMillis(up)
	return r, err
}

// Runs lists runs, newest first.
func (s *Store) Runs() ([]TrainRun, error) {
	return queryAll(s.db, "list runs", scanRun, `SELECT `+runColumns+` FROM train_runs ORDER BY created DESC`)
}

// Run returns one run.
func (s *Store) Run(id string) (TrainRun, error) {
	r, err := scanRun(s.db.QueryRow(`SELECT `+runColumns+` FROM train_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// InterruptRuns marks runs a dead process left going as interrupted and
// returns how many there were.
func (s *Store) InterruptRuns() (int, error) {
	res, err := s.db.Exec(`UPDATE train_runs SET state = ?, updated = ? WHERE state IN (?, ?, ?)`,
		RunInterrupted, now(), RunPreparing, RunTraining, RunPaused)
	if err != nil {
		return 0, fmt.Errorf("history: mark interrupted runs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// AddMetrics stores a batch of step metrics in one transaction; a step
// already stored keeps the values the new row leaves unmeasured.
func (s *Store) AddMetrics(runID string, ms []Metric) error {
	if len(ms) == 0 {
		return nil
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, m := range ms {
		if _, err := tx.Exec(`INSERT INTO train_metrics (run_id, step, loss, val_loss, margin, tokens) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT(run_id, step) DO UPDATE SET loss = COALESCE(excluded.loss, loss),
				val_loss = COALESCE(excluded.val_loss, val_loss), margin = COALESCE(excluded.margin, margin),
				tokens = MAX(excluded.tokens, tokens)`,
			runID, m.Step, nullable(m.Loss), nullable(m.ValLoss), nullable(m.Margin), m.Tokens); err != nil {
			return fmt.Errorf("history: save metrics: %w", err)
		}
	}
	return tx.Commit()
}

// Metrics returns a run's metrics in step order.
func (s *Store) Metrics(runID string) ([]Metric, error) {
	return queryAll(s.db, "read metrics", func(sc scanner) (Metric, error) {
		var m Metric
		var l, v, g sql.NullFloat64
		err := sc.Scan(&m.Step, &l, &v, &g, &m.Tokens)
		m.Loss, m.ValLoss, m.Margin = orNaN(l), orNaN(v), orNaN(g)
		return m, err
	}, `SELECT step, loss, val_loss, margin, tokens FROM train_metrics WHERE run_id = ? ORDER BY step`, runID)
}

// AddCheckpoint records a checkpoint whose files are complete.
func (s *Store) AddCheckpoint(runID string, c Checkpoint) error {
	_, err := s.db.Exec(`INSERT INTO train_checkpoints (run_id, step, path, val_loss, created) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(run_id, step) DO UPDATE SET path = excluded.path, val_loss = excluded.val_loss`,
		runID, c.Step, c.Path, nullable(c.ValLoss), now())
	if err != nil {
		return fmt.Errorf("history: record checkpoint: %w", err)
	}
	return nil
}

// Checkpoints lists a run's checkpoints in step order.
func (s *Store) Checkpoints(runID string) ([]Checkpoint, error) {
	return queryAll(s.db, "read checkpoints", func(sc scanner) (Checkpoint, error) {
		var c Checkpoint
		var v sql.NullFloat64
		var cr int64
		err := sc.Scan(&c.Step, &c.Path, &v, &cr)
		c.ValLoss, c.Created = orNaN(v), fromMillis(cr)
		return c, err
	}, `SELECT step, path, val_loss, created FROM train_checkpoints WHERE run_id = ? ORDER BY step`, runID)
}

// RewindRun forgets a run's metrics and checkpoints past step (a run
// resumed from step's checkpoint writes its own).
func (s *Store) RewindRun(runID string, step int) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM train_checkpoints WHERE run_id = ? AND step > ?`,
		`DELETE FROM train_metrics WHERE run_id = ? AND step > ?`} {
		if _, err := tx.Exec(q, runID, step); err != nil {
			return fmt.Errorf("history: rewind run: %w", err)
		}
	}
	return tx.Commit()
}
