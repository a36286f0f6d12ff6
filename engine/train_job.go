package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"perch/engine/gocpu"
	"sync"

	"perch/engine/chattemplate"
	"perch/engine/lora"
	"perch/engine/tensor"
	"perch/engine/train"
	"perch/engine/trainset"
)

// ErrTraining is returned by Train while another run holds the engine.
var ErrTraining = errors.New("a fine-tuning run is already going on this model: wait for it or stop it")

// TrainRequest is one fine-tuning run of the engine's model.
type TrainRequest struct {
	// Data is a dataset folder (train.jsonl, optional valid.jsonl and
	// test.jsonl), rendered with the model's own chat template; or Train
	// and Valid hold rows the caller made (the app's own examples).
	Data         string
	Train, Valid []train.Row
	// Examples and ValidExamples are rows as the app holds them, before
	// any token (encoded here with the model's template and tokenizer, as
	// a folder's lines are); ReadMedia gives their media parts' bytes.
	Examples, ValidExamples []trainset.Example
	ReadMedia               func(kind, name string) ([]byte, error)
	MaxLen                  int           // rows are cut to this many tokens (0: 2048)
	Options                 train.Options // method, learning rate, LoRA+ ratio, clipping, seed…
	// LoRA is the shape of a new adapter (rank, scale, dropout, keys,
	// layers); with Resume the adapter's own config applies.
	LoRA lora.Config
	// Resume starts from this adapter folder (Perch's or mlx-lm's).
	Resume string
	// Continue goes on with the run saved in this adapter folder (or one of
	// its checkpoints) where it stopped, as if it had never stopped: the
	// request must repeat the run's settings (Iters may grow).
	Continue string
	// Iters optimizer steps of BatchSize rows; see train.Plan for the rest.
	Iters, BatchSize                int
	ValEvery, ValBatches, SaveEvery int
	NoShuffle                       bool
	// AdapterDir receives the adapter, checkpoints/, metrics.json and
	// metrics.jsonl.
	AdapterDir string
	// WholeSequence makes chat rows of SFT learn every token, not only the
	// answer (mlx-lm without --mask-prompt).
	WholeSequence bool
	// Test reads Data's test.jsonl and, once the run ends, reports its
	// loss over TestBatches batches (-1: all) before the done event.
	Test        bool
	TestBatches int
	// TestOnly evaluates the adapter in Resume (none: the base model) on
	// the test rows and trains nothing (mlx-lm's --test without --train).
	TestOnly bool
	// Epochs, when above 0, sets Iters to that many passes over the
	// training rows (mlx-lm-lora's --epochs).
	Epochs int

	testRows []train.Row
}

// TrainEvent is one report of a run: started, notices, step, validation,
// checkpoint and paused events, then exactly one done or error.
type TrainEvent = train.Event

// TrainRun is a fine-tune in progress. Cancel the context given to Train
// to stop it at the next step boundary (the latest adapter is saved).
type TrainRun struct {
	events chan TrainEvent
	ctx    context.Context
	mu     sync.Mutex
	resume chan struct{} // non-nil while paused
	step   int           // the last step reported (engine thread)
}

// Events carries the run's events and closes after the last; read it to
// the end (the run waits while it is full).
func (r *TrainRun) Events() <-chan TrainEvent { return r.events }

// Pause holds the run after its current step; requests are still served.
func (r *TrainRun) Pause() {
	r.mu.Lock()
	if r.resume == nil {
		r.resume = make(chan struct{})
	}
	r.mu.Unlock()
}

// Resume lets a paused run go on.
func (r *TrainRun) Resume() {
	r.mu.Lock()
	if r.resume != nil {
		close(r.resume)
		r.resume = nil
	}
	r.mu.Unlock()
}

func (r *TrainRun) pausedCh() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resume
}

// send delivers ev, waiting while the channel is full unless the run is
// cancelled (the last events still go out when there is room).
func (r *TrainRun) send(ev TrainEvent) {
	if ev.Kind == train.EventStep {
		r.step = ev.Step
	}
	select {
	case r.events <- ev:
		return
	default:
	}
	select {
	case r.events <- ev:
	case <-r.ctx.Done():
	}
}

// Train prepares a run on the caller's goroutine (the dataset is read and
// tokenized, the resumed adapter loaded, every setting checked) and queues
// it. On the engine thread the run becomes the worker's background task
// (task.go): it goes one step at a time while no request waits; between
// steps the worker serves the waiting requests on the same weights (each
// with its own adapter or none): a request never changes the run's result.
func (e *Engine) Train(ctx context.Context, req TrainRequest) (*TrainRun, error) {
	if ctx == nil {
		return nil, errors.New("nil context")
	}
	if !e.training.CompareAndSwap(false, true) {
		return nil, ErrTraining
	}
	plan, resumed, notes, err := e.prepareTraining(ctx, &req)
	if err != nil {
		e.training.Store(false)
		return nil, err
	}
	jctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.life, cancel)
	run := &TrainRun{events: make(chan TrainEvent, 64), ctx: jctx}
	for _, n := range notes {
		run.send(TrainEvent{Kind: train.EventNotice, Text: n})
	}
	release := func() { stop(); cancel() }
	j := &job{ctx: jctx, events: make(chan Event, 1)}
	j.control = func(tensor.Backend) {
		t := newTask(jctx, func(ctx context.Context, piece func()) {
			defer release()
			e.runTraining(ctx, run, &req, plan, resumed, piece)
		}, run.pausedCh, func(why PauseReason) {
			text := map[PauseReason]string{PauseServing: "serving a request", PauseUser: "paused"}[why]
			run.send(TrainEvent{Kind: train.EventPaused, Step: run.step, Pause: why, Text: text})
		})
		if _, more := t.next(); more { // the run's setup, up to its first step
			e.task = t
		}
	}
	if err := e.enqueue(j); err != nil {
		release()
		e.training.Store(false)
		return nil, err
	}
	return run, nil
}

// prepareTraining does the run's work that needs no native call.
func (e *Engine) prepareTraining(ctx context.Context, req *TrainRequest) (train.Plan, *lora.Adapter, []string, error) {
	opts := req.Options
	if opts.Method == "" {
		opts.Method = train.SFT
	}
	if _, err := train.ParseMethod(string(opts.Method)); err != nil {
		return train.Plan{}, nil, nil, err
	}
	req.Options = opts
	if n := e.cfg.Text.MaxPositionEmbeddings; req.MaxLen < 0 || (n > 0 && req.MaxLen > n) {
		return train.Plan{}, nil, nil, fmt.Errorf("--max-seq-len %d: the model reads at most %d tokens: give a length from 1 to %d", req.MaxLen, n, n)
	}
	plan := train.Plan{Method: opts.Method, Train: req.Train, Valid: req.Valid, Iters: req.Iters, BatchSize: req.BatchSize,
		ValEvery: req.ValEvery, ValBatches: req.ValBatches, SaveEvery: req.SaveEvery, Seed: opts.Seed,
		NoShuffle: req.NoShuffle, AdapterDir: req.AdapterDir}
	var notes []string
	if req.Data != "" || len(req.Examples) > 0 {
		if req.Data != "" && len(req.Examples) > 0 {
			return plan, nil, nil, errors.New("give the training rows as a data folder or as examples, not both")
		}
		tmpl, err := chattemplate.Load(e.info.Dir)
		if err != nil {
			return plan, nil, nil, fmt.Errorf("chat template: %w", err)
		}
		enc := &trainset.Encoder{Template: tmpl, Tok: e.tok, Method: opts.Method, MaxLen: req.MaxLen, Vocab: e.cfg.Text.VocabSize, Processor: e.proc,
			Whole: req.WholeSequence, Test: req.Test, ReadMedia: req.ReadMedia}
		var ds *trainset.Dataset
		if req.Data != "" {
			ds, err = trainset.LoadFolder(ctx, req.Data, enc)
		} else {
			ds, err = encodeExamples(ctx, req, enc)
		}
		if err != nil {
			return plan, nil, nil, err
		}
		plan.Train = ds.Train.Rows
		for _, s := range []*trainset.Split{ds.Train, ds.Valid} {
			if s != nil && s.Notes.String() != "" {
				notes = append(notes, s.Name+": "+s.Notes.String())
			}
		}
		if ds.Valid != nil {
			plan.Valid = ds.Valid.Rows
		}
		if ds.Test != nil {
			req.testRows = ds.Test.Rows
		}
	}
	if req.Test && len(req.testRows) == 0 {
		return plan, nil, nil, errors.New("--test needs a test.jsonl in the data folder")
	}
	if req.Epochs > 0 && req.BatchSize > 0 {
		plan.Iters = (req.Epochs*len(plan.Train) + req.BatchSize - 1) / req.BatchSize
		req.Iters = plan.Iters
	}
	if req.TestOnly {
		plan.Iters = max(plan.Iters, 1) // nothing trains; the rest of the plan still holds
	}
	if err := plan.Check(); err != nil {
		return plan, nil, nil, err
	}
	if req.Continue != "" {
		return e.prepareContinue(req, plan, notes)
	}
	if err := os.MkdirAll(req.AdapterDir, 0o755); err != nil {
		return plan, nil, nil, fmt.Errorf("adapter folder: %w", err)
	}
	var resumed *lora.Adapter
	if req.Resume != "" {
		a, err := lora.Load(req.Resume)
		if err != nil {
			return plan, nil, nil, err
		}
		if _, _, err := a.Match(e.model.Text); err != nil {
			return plan, nil, nil, fmt.Errorf("adapter %s does not fit this model: %w", req.Resume, err)
		}
		resumed = a
	} else if err := req.LoRA.Validate(); err != nil {
		return plan, nil, nil, err
	}
	plan.Settings = req.settings(resumed)
	return plan, resumed, notes, nil
}

// runTraining is the run on the engine thread; piece hands the thread back
// to the worker at each step boundary.
func (e *Engine) runTraining(ctx context.Context, run *TrainRun, req *TrainRequest, plan train.Plan, ad *lora.Adapter, piece func()) {
	b := e.b
	if gb, ok := b.(*gocpu.Backend); ok { // gradients on the exact path
		defer gb.SetIntPrefill(gb.SetIntPrefill(false))
		defer gb.SetIntDecode(gb.SetIntDecode(false))
	}
	defer func() {
		if r := recover(); r != nil {
			err := b.Err()
			if err == nil {
				err = fmt.Errorf("internal error: %v", r)
			}
			run.send(TrainEvent{Kind: train.EventError, Err: err})
		}
		b.ClearErr()
		b.Sweep()
		close(run.events)
		e.training.Store(false)
	}()
	if ad == nil {
		var err error
		if ad, err = lora.New(req.LoRA, e.model, req.Options.Seed); err != nil {
			run.send(TrainEvent{Kind: train.EventError, Err: err})
			return
		}
	}
	tr, err := train.NewTrainer(b, e.model, ad, req.Options)
	if err != nil {
		run.send(TrainEvent{Kind: train.EventError, Err: err})
		return
	}
	defer tr.Close()
	if req.TestOnly {
		withTest(ctx, run.send, tr, req, plan.BatchSize)(TrainEvent{Kind: train.EventDone, Result: &train.Result{Adapter: req.Resume}})
		return
	}
	if plan.Resume != nil {
		if err := tr.Restore(plan.Resume.Moments); err != nil {
			run.send(TrainEvent{Kind: train.EventError, Err: err})
			return
		}
	}
	plan.Params = ad.Params()
	train.Run(ctx, train.Driven(tr), plan, train.Host{Emit: withTest(ctx, run.send, tr, req, plan.BatchSize), Yield: piece})
}

// withTest is emit that, with req.Test, evaluates the test rows at the
// final adapter when the run finishes and reports it before the done event.
func withTest(ctx context.Context, emit func(TrainEvent), tr *train.Trainer, req *TrainRequest, batch int) func(TrainEvent) {
	if !req.Test {
		return emit
	}
	return func(ev TrainEvent) {
		if ev.Kind == train.EventDone && ev.Result != nil && !ev.Result.Cancelled {
			n := req.TestBatches
			if n == 0 {
				n = -1
			}
			loss, tokens, err := train.TestLoss(ctx, tr, req.testRows, batch, n)
			if err != nil {
				emit(TrainEvent{Kind: train.EventError, Err: err})
				return
			}
			emit(TrainEvent{Kind: train.EventTest, Step: ev.Result.Steps, ValLoss: loss, ValTokens: tokens})
		}
		emit(ev)
	}
}
