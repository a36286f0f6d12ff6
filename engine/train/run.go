package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"time"

	"perch/internal/durable"
)

// Stepper is what a run drives: the Trainer (Driven), or a test's fake.
type Stepper interface {
	Step(rows []Row) (StepMetrics, error)
	Evaluate(rows []Row) (StepMetrics, error)
	Snapshot() (Snapshot, error)
}

// Driven is t as a run drives it.
func Driven(t *Trainer) Stepper { return driven{t} }

type driven struct{ *Trainer }

func (d driven) Snapshot() (Snapshot, error) {
	a, err := d.Trainer.Snapshot()
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Plan is one run.
type Plan struct {
	Method       Method
	Train, Valid []Row
	Iters        int
	BatchSize    int
	// ValEvery validates every N steps (and before the first); the last
	// step and every checkpoint are always validated when there is
	// validation data. 0: only those.
	ValEvery   int
	ValBatches int // batches per validation (0: 25; -1: all)
	SaveEvery  int // checkpoint every N steps (0: none)
	Seed       uint64
	NoShuffle  bool
	AdapterDir string
	Params     int // trainable parameters, for the started event
	// Settings, when set, go into every saved state so the run can be
	// continued (ReadState); Resume continues the run saved in AdapterDir.
	Settings *Settings
	Resume   *State

	fingerprint string // of the rows, set by Run
}

// DefaultValBatches bounds a validation (mlx-lm's default).
const DefaultValBatches = 25

// Host connects a run to where it runs.
type Host struct {
	// Emit receives every event; the last is EventDone or EventError.
	Emit func(Event)
	// Yield runs at every step boundary (and between validation batches):
	// the engine serves its waiting requests there.
	Yield func()
	// save writes a snapshot into a folder (nil: Snapshot.Save); tests
	// inject faults here.
	save func(s Snapshot, dir string) error
}

// Check refuses a plan that cannot run, before any work.
func (p *Plan) Check() error {
	switch {
	case p.BatchSize < 1:
		return fmt.Errorf("batch size %d: it must be at least 1", p.BatchSize)
	case len(p.Train) < p.BatchSize:
		return fmt.Errorf("the training set has %d rows, fewer than the batch size %d: add rows or lower --batch-size", len(p.Train), p.BatchSize)
	case p.Iters < 1:
		return fmt.Errorf("iterations %d: train at least 1 step", p.Iters)
	case p.AdapterDir == "":
		return errors.New("no adapter folder to save into")
	case p.SaveEvery < 0 || p.ValEvery < 0:
		return errors.New("--save-every and --val-every cannot be negative")
	}
	return nil
}

// Run trains p.Iters steps on s, validating, checkpointing and writing the
// metrics as it goes. It succeeds only once every save has finished; a
// failed save fails it with an error naming that save, after the latest
// adapter has been saved where possible. Cancelling ctx stops at a step
// boundary and saves the latest adapter (Result.Cancelled).
func Run(ctx context.Context, s Stepper, p Plan, h Host) (*Result, error) {
	if h.Emit == nil {
		h.Emit = func(Event) {}
	}
	if h.Yield == nil {
		h.Yield = func() {}
	}
	fail := func(err error) (*Result, error) {
		h.Emit(Event{Kind: EventError, Err: err})
		return nil, err
	}
	if err := p.Check(); err != nil {
		return fail(err)
	}
	if p.ValBatches == 0 {
		p.ValBatches = DefaultValBatches
	}
	batcher, err := NewBatcher(p.Train, p.BatchSize, p.Seed, !p.NoShuffle)
	if err != nil {
		return fail(err)
	}
	p.fingerprint = Fingerprint(p.Train, p.Valid)
	r := &runner{s: s, p: p, h: h, batcher: batcher, metrics: Metrics{Method: p.Method, Iters: p.Iters}}
	r.dealt = batcher.position()
	if p.Resume != nil {
		if live, _ := RunLive(p.AdapterDir); live {
			return fail(fmt.Errorf("a run is still writing into %s: stop it before continuing it", p.AdapterDir))
		}
		if p.Resume.Step >= p.Iters {
			return fail(fmt.Errorf("the run already took %d of its %d steps: give a larger --iters to train on", p.Resume.Step, p.Iters))
		}
		if err := r.continueFrom(p.Resume); err != nil {
			return fail(fmt.Errorf("continue the run in %s: %w", p.AdapterDir, err))
		}
	}
	if r.st, err = openStream(p.AdapterDir); err != nil {
		return fail(fmt.Errorf("adapter folder: %w", err))
	}
	removeStale(p.AdapterDir)
	r.sv = newSaver(p.AdapterDir, h.save)
	r.emit(Event{Kind: EventStarted, Started: &Started{Method: p.Method, Iters: p.Iters, BatchSize: p.BatchSize,
		TrainRows: len(p.Train), ValidRows: len(p.Valid), AdapterDir: p.AdapterDir, Params: p.Params, Resumed: r.start}})
	cancelled, err := r.loop(ctx)
	return r.finish(cancelled, err)
}

type runner struct {
	s       Stepper
	p       Plan
	h       Host
	batcher *Batcher
	st      *stream
	sv      *saver
	emitMu  sync.Mutex // Emit runs on the engine thread and, for checkpoints, the saver's

	metricsMu sync.Mutex // the saver records checkpoints as their saves complete
	metrics   Metrics
	saving    chan struct{} // closed when the last checkpoint queued is written or has failed

	start       int      // steps done before this process (a continued run)
	dealt       batchPos // the batcher after the last batch stepped (it deals one ahead)
	streamBytes int64    // metrics.jsonl's length once the queued lines are written
	trainTime   time.Duration
}

// emit reports ev and appends it to the metrics stream.
func (r *runner) emit(ev Event) {
	line := ev.JSON(r.p.Method, true)
	r.streamBytes += int64(len(line)) + 1
	r.sv.do("metrics stream", func() error { return r.st.write(line) })
	r.report(ev)
}

// report hands ev to the host, one event at a time.
func (r *runner) report(ev Event) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.h.Emit(ev)
}

// loop runs the steps; it reports whether ctx stopped it.
func (r *runner) loop(ctx context.Context) (cancelled bool, err error) {
	p := &r.p
	hasVal := len(p.Valid) > 0
	stopped := func(err error) (bool, error) {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return true, nil
		}
		return false, err
	}
	if p.Resume == nil {
		if hasVal && p.ValEvery > 0 {
			if _, err := r.validate(ctx, 0); err != nil {
				return stopped(err)
			}
		}
		// The adapter the run starts from goes to the top of the folder at
		// once: a crash before the first checkpoint leaves a usable adapter
		// and a state to continue from.
		if err := r.saveTop(0); err != nil {
			return false, err
		}
	}
	var next chan prepared
	var nextPos batchPos
	fetch := func() {
		rows := r.batcher.Next()
		next, nextPos = prefetch(ctx, rows), r.batcher.position()
	}
	for step := r.start + 1; step <= p.Iters; step++ {
		r.h.Yield()
		if ctx.Err() != nil {
			return true, nil
		}
		if err := r.sv.failed(); err != nil {
			return false, err
		}
		if next == nil {
			fetch()
		}
		got, pos := <-next, nextPos
		next = nil
		if got.err != nil {
			return stopped(got.err)
		}
		batch := got.rows
		if step < p.Iters { // the next batch's media are prepared while this one trains
			fetch()
		}
		t0 := time.Now()
		m, err := r.s.Step(batch)
		if err != nil {
			return false, &stepError{fmt.Errorf("step %d: %w", step, err)}
		}
		if math.IsNaN(m.Loss) || math.IsInf(m.Loss, 0) {
			return false, &stepError{fmt.Errorf("step %d: the loss is %v: lower --learning-rate (or --grad-clip) and train again", step, m.Loss)}
		}
		elapsed := time.Since(t0)
		if m.Elapsed == 0 {
			m.Elapsed = elapsed
		}
		r.trainTime += elapsed
		r.dealt = pos
		loss := m.Loss
		r.metricsMu.Lock()
		r.metrics.Steps, r.metrics.LastLoss = step, &loss
		r.metricsMu.Unlock()
		r.emit(Event{Kind: EventStep, Step: step, Metrics: m, TokensPerSec: float64(m.Tokens) / elapsed.Seconds(),
			ETA: r.trainTime / time.Duration(step-r.start) * time.Duration(p.Iters-step)})

		save := p.SaveEvery > 0 && step%p.SaveEvery == 0
		val, validated := 0.0, false
		if hasVal && (save || step == p.Iters || (p.ValEvery > 0 && step%p.ValEvery == 0)) {
			if val, err = r.validate(ctx, step); err != nil {
				return stopped(err)
			}
			validated = true
		}
		if save {
			if err := r.checkpoint(step, val, validated); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

type prepared struct {
	rows []Row
	err  error
}

// prefetch prepares a batch's media on a goroutine of its own (decoding
// is CPU work that must not hold the engine thread); a batch without
// media is ready at once.
func prefetch(ctx context.Context, batch []Row) chan prepared {
	ch := make(chan prepared, 1)
	for i := range batch {
		if batch[i].source != nil {
			go func() {
				rows, err := withMedia(ctx, batch)
				ch <- prepared{rows, err}
			}()
			return ch
		}
	}
	ch <- prepared{rows: batch}
	return ch
}

// withMedia prepares the media of a batch's rows (a copy: the dataset
// keeps none).
func withMedia(ctx context.Context, batch []Row) ([]Row, error) {
	out := batch
	for i := range batch {
		if batch[i].source == nil {
			continue
		}
		if &out[0] == &batch[0] {
			out = append([]Row(nil), batch...)
		}
		var err error
		if out[i], err = batch[i].WithMedia(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// validate runs the validation batches and records their loss: a mean over
// counted tokens (SFT) or over pairs (DPO, ORPO).
func (r *runner) validate(ctx context.Context, step int) (float64, error) {
	t0 := time.Now()
	var sum, weight float64
	tokens := 0
	for i, b := range evalBatches(r.p.Valid, r.p.BatchSize, r.p.ValBatches) {
		if i > 0 {
			r.h.Yield()
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b, err := withMedia(ctx, b)
		if err != nil {
			return 0, err
		}
		m, err := r.s.Evaluate(b)
		if err != nil {
			return 0, fmt.Errorf("validation at step %d: %w", step, err)
		}
		w := float64(m.Tokens)
		if r.p.Method.Rows() != RowsSFT { // a preference loss is a mean over rows
			w = float64(len(b))
		}
		sum += m.Loss * w
		weight += w
		tokens += m.Tokens
	}
	loss := sum / weight
	r.metricsMu.Lock()
	r.metrics.Validation = append(r.metrics.Validation, ValPoint{Step: step, Loss: loss, Tokens: tokens})
	r.metricsMu.Unlock()
	r.emit(Event{Kind: EventValidation, Step: step, ValLoss: loss, ValTokens: tokens, Elapsed: time.Since(t0)})
	r.writeMetrics()
	return loss, nil
}

// finish saves the latest adapter (unless a step failed), awaits every
// save, writes the final metrics.json and reports the end: EventDone only
// when all of it succeeded.
func (r *runner) finish(cancelled bool, runErr error) (*Result, error) {
	res := &Result{Steps: r.metrics.Steps, Adapter: r.p.AdapterDir, Cancelled: cancelled}
	var stepErr *stepError
	saved := false
	if !errors.As(runErr, &stepErr) && (r.p.Resume == nil || r.metrics.Steps > r.start) {
		r.metricsMu.Lock()
		m := r.metrics.clone()
		r.metricsMu.Unlock()
		if pt, err := r.point(r.metrics.Steps, m); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("final adapter: %w", err))
		} else {
			r.sv.do("final adapter "+r.p.AdapterDir, func() error {
				err := r.sv.save(pt, r.p.AdapterDir)
				saved = err == nil
				return err
			})
		}
	} else if r.p.Resume != nil && r.metrics.Steps == r.start {
		saved = true // stopped before a step: the state continued from is the top one
	}
	first := r.sv.failed()
	err := r.sv.wait()
	if runErr != nil && (first == nil || runErr != first) {
		err = errors.Join(runErr, err)
	}
	if saved {
		r.metrics.Adapter = "."
		r.metrics.bestOfFinal()
		if err != nil {
			err = fmt.Errorf("%w (the latest adapter, after step %d, is saved in %s)", err, res.Steps, r.p.AdapterDir)
		}
	}
	r.metrics.Finished, r.metrics.Cancelled = err == nil && !cancelled, cancelled
	if err != nil {
		r.metrics.Error = err.Error()
	}
	if werr := durable.WriteFile(filepath.Join(r.p.AdapterDir, MetricsFile), r.metrics.encode(), 0o755); werr != nil && err == nil {
		err = fmt.Errorf("%s: %w", MetricsFile, werr)
	}
	if b := r.metrics.Best; b != nil {
		res.Best, res.BestStep, res.BestLoss = filepath.Join(r.p.AdapterDir, b.Path), b.Step, *b.ValLoss
	}
	last := Event{Kind: EventDone, Step: res.Steps, Result: res}
	if err != nil {
		last = Event{Kind: EventError, Step: res.Steps, Err: err}
	}
	werr := r.st.write(last.JSON(r.p.Method, true))
	if cerr := r.st.close(); werr == nil {
		werr = cerr
	}
	if err == nil && werr != nil {
		err = fmt.Errorf("metrics stream: %w", werr)
		last = Event{Kind: EventError, Step: res.Steps, Err: err}
	}
	r.report(last)
	return res, err
}

// stepError marks a failure of the step itself: the leaves may be broken,
// so the latest adapter is not saved over the last good one.
type stepError struct{ err error }

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }
