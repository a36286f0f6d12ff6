package train

import (
	"encoding/json"
	"math"
	"time"
)

// EventKind tells which fields of an Event are set.
type EventKind int

const (
	EventStarted    EventKind = iota // Started
	EventStep                        // Step, Metrics, TokensPerSec, ETA
	EventValidation                  // Step, ValLoss, ValTokens, Elapsed
	EventCheckpoint                  // Step, Path (saved and renamed into place), ValLoss (NaN: not validated), Best
	EventPaused                      // Step, Pause (and Text): a request is being served, or the run is paused
	EventNotice                      // Text
	EventDone                        // Result
	EventError                       // Err
	EventTest                        // ValLoss: the test set's loss, ValTokens (perch train --test; before EventDone)
)

// PauseReason says why a run stopped stepping for a while.
type PauseReason int

const (
	PauseServing PauseReason = iota + 1 // a request is answered between two steps
	PauseUser                           // the run was paused; it waits for Resume
)

// Started describes a run as it begins.
type Started struct {
	Method               Method
	Iters, BatchSize     int
	TrainRows, ValidRows int
	AdapterDir           string
	Params               int // trainable parameters
	Resumed              int // steps a continued run had taken before (0: a new run)
}

// Event is one report of a run. No tensor crosses it.
type Event struct {
	Kind         EventKind
	Step         int
	Started      *Started
	Metrics      StepMetrics
	TokensPerSec float64       // Metrics.Tokens (the tokens the loss counts, as mlx-lm counts them) per second
	ETA          time.Duration // to the last step, at the pace so far
	ValLoss      float64
	ValTokens    int
	Elapsed      time.Duration
	Path         string
	Text         string
	Pause        PauseReason // with EventPaused
	// Best, with EventCheckpoint: the saved state with the lowest
	// validation loss so far, as metrics.json names it (Path relative to
	// the adapter folder; a continued run's earlier checkpoints count);
	// nil while no saved state was validated.
	Best   *Checkpoint
	Result *Result
	Err    error
}

// Result is how a run ended.
type Result struct {
	Steps     int    // optimizer steps taken
	Adapter   string // the final adapter folder
	Best      string // checkpoint folder with the lowest validation loss ("" without validation)
	BestStep  int    // the step Best was saved at
	BestLoss  float64
	Cancelled bool
}

// JSON is the event as one line of the metrics stream. Step lines carry
// exactly type, step, loss, grad_norm and tokens (and the method's own
// metrics under their keys: Objective.Metrics); with perf they add tokens_per_s, peak_memory_bytes,
// elapsed_ms, eta_s and learning_rate.
func (ev Event) JSON(method Method, perf bool) []byte {
	var v map[string]any
	switch ev.Kind {
	case EventStarted:
		s := ev.Started
		v = map[string]any{"type": "started", "method": s.Method, "iters": s.Iters, "batch_size": s.BatchSize,
			"train_rows": s.TrainRows, "valid_rows": s.ValidRows, "adapter_path": s.AdapterDir, "parameters": s.Params,
			"time": time.Now().UTC().Format(time.RFC3339)}
		if s.Resumed > 0 {
			v["resumed_from_step"] = s.Resumed
		}
	case EventStep:
		m := ev.Metrics
		v = map[string]any{"type": "step", "step": ev.Step, "loss": num(m.Loss), "grad_norm": num(m.GradNorm), "tokens": m.Tokens}
		for _, t := range m.Terms {
			v[t.Key] = num(t.Value)
		}
		if perf {
			v["tokens_per_s"], v["peak_memory_bytes"], v["elapsed_ms"] = num(ev.TokensPerSec), m.PeakMemory, m.Elapsed.Milliseconds()
			v["eta_s"], v["learning_rate"] = ev.ETA.Seconds(), num(m.LR)
		}
	case EventValidation:
		v = map[string]any{"type": "validation", "step": ev.Step, "val_loss": num(ev.ValLoss), "val_tokens": ev.ValTokens, "elapsed_ms": ev.Elapsed.Milliseconds()}
	case EventTest:
		v = map[string]any{"type": "test", "step": ev.Step, "test_loss": num(ev.ValLoss), "test_ppl": num(math.Exp(ev.ValLoss)), "test_tokens": ev.ValTokens}
	case EventCheckpoint:
		v = map[string]any{"type": "checkpoint", "step": ev.Step, "path": ev.Path}
	case EventPaused:
		v = map[string]any{"type": "paused", "step": ev.Step, "reason": ev.Text}
	case EventNotice:
		v = map[string]any{"type": "notice", "text": ev.Text}
	case EventDone:
		r := ev.Result
		v = map[string]any{"type": "done", "steps": r.Steps, "adapter_path": r.Adapter, "cancelled": r.Cancelled}
		if r.Best != "" {
			v["best_checkpoint"], v["best_val_loss"] = r.Best, num(r.BestLoss)
		}
	case EventError:
		v = map[string]any{"type": "error", "message": ev.Err.Error()}
	}
	b, _ := json.Marshal(v)
	return b
}

// num keeps a float JSON can hold; NaN and infinities become null.
func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}
