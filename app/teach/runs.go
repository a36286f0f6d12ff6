package teach

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"perch/app/history"
	"perch/engine/lora"
	"perch/engine/train"
	"perch/ui"
)

// saveEvery is how often metrics and progress reach the database while a
// run goes (checkpoints and the end are written at once).
const saveEvery = 500 * time.Millisecond

// active is the run going on.
type active struct {
	rec      history.TrainRun // guarded by Service.mu
	plan     ui.TrainPlan
	cancel   context.CancelFunc
	tr       Training
	offset   int // steps done before this segment
	eta      time.Duration
	yielding bool
	stopping bool
	before   *train.Checkpoint // the best saved state of the segments before this one (nil: none validated)
}

var errBusy = errors.New("a run is already going: wait for it to finish, or stop it")

// Start implements ui.Teacher: it refuses a plan that cannot run, records
// the run, then builds its data and trains in the background.
func (s *Service) Start(plan ui.TrainPlan) (ui.TrainRun, error) {
	est, err := s.Estimate(plan)
	if err != nil {
		return ui.TrainRun{}, err
	}
	if !est.Fits {
		return ui.TrainRun{}, errors.New(est.Reason)
	}
	_, baseName, err := s.locate(plan.Base)
	if err != nil {
		return ui.TrainRun{}, err
	}
	rec := history.TrainRun{ID: newRunID(), Name: strings.TrimSpace(plan.Name), Base: plan.Base, BaseName: baseName,
		Method: string(plan.Method), Plan: encodePlan(plan), State: history.RunPreparing, Steps: plan.Steps, BestVal: math.NaN()}
	rec.Dir = s.runDir(rec.ID)
	s.mu.Lock()
	if s.active != nil {
		s.mu.Unlock()
		return ui.TrainRun{}, errBusy
	}
	a := &active{rec: rec, plan: plan}
	s.active = a
	s.mu.Unlock()
	if err := s.o.Store.CreateRun(&a.rec); err != nil {
		s.clearActive(a)
		return ui.TrainRun{}, err
	}
	go s.execute(a, func() (trainData, error) { return s.rowsFor(plan) }, "", 0)
	return s.toUI(s.snapshot(a)), nil
}

func newRunID() string {
	return fmt.Sprintf("run-%s", time.Now().UTC().Format("20060102-150405.000000"))
}

func (s *Service) snapshot(a *active) history.TrainRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.rec
}

func (s *Service) clearActive(a *active) {
	s.mu.Lock()
	if s.active == a {
		s.active = nil
	}
	s.mu.Unlock()
}

// job is plan as one segment of training.
func job(plan ui.TrainPlan, runID string, data trainData, dir, resume string, iters, saveEvery int, seed *uint64) Job {
	h := fnv.New64a()
	h.Write([]byte(runID))
	sum := h.Sum64()
	if seed != nil {
		sum = *seed
	}
	if saveEvery <= 0 {
		saveEvery = min(max(iters/10, 5), 50) // a kill loses at most 50 steps
	}
	return Job{Train: data.train, Valid: data.valid, Data: data.folder, Method: string(plan.Method), Iters: iters, BatchSize: plan.BatchSize, MaxLen: plan.MaxSeqLen,
		Rank: plan.Rank, LR: plan.LearningRate, LoRAPlus: plan.LoRAPlusRatio, Beta: plan.Beta, Lambda: plan.Lambda,
		ValEvery: saveEvery, SaveEvery: saveEvery, AdapterDir: dir, Resume: resume, Seed: sum}
}

// execute runs one segment of a: prepare gives its rows; resume and
// offset continue from a checkpoint.
func (s *Service) execute(a *active, prepare func() (trainData, error), resume string, offset int) {
	defer s.clearActive(a)
	fail := func(err error) {
		s.finish(a, history.RunFailed, friendly(err), nil)
	}
	data, err := prepare()
	if err != nil {
		fail(err)
		return
	}
	// A checkpoint with a resume state continues its run exactly, steps
	// counted from the run's start; an older one starts a new segment from
	// its adapter.
	cont := false
	if resume != "" {
		if _, err := train.ReadState(resume); err == nil {
			cont, offset = true, 0
		}
	}
	seg := filepath.Join(s.runDir(a.rec.ID), fmt.Sprintf("part-%d", offset))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.mu.Lock()
	a.cancel, a.offset = cancel, offset
	stopping := a.stopping
	s.mu.Unlock()
	if stopping {
		s.finish(a, history.RunStopped, "", nil)
		return
	}
	j := job(a.plan, a.rec.ID, data, seg, resume, a.rec.Steps-offset, s.o.SaveEvery, s.o.Seed)
	if cont {
		j.Continue, j.Resume = resume, ""
	}
	j.ReadMedia = s.readMedia
	tr, err := s.o.Trainer.Train(ctx, a.rec.Base, j)
	if err != nil {
		fail(err)
		return
	}
	s.mu.Lock()
	a.tr = tr
	s.mu.Unlock()
	s.follow(a, tr)
}

// follow records a segment's events as they come.
func (s *Service) follow(a *active, tr Training) {
	var pending []history.Metric
	last := time.Now()
	flush := func(force bool) {
		if !force && time.Since(last) < saveEvery {
			return
		}
		s.o.Store.AddMetrics(a.rec.ID, pending)
		rec := s.snapshot(a)
		s.o.Store.UpdateRun(&rec)
		pending, last = nil, time.Now()
	}
	for ev := range tr.Events() {
		var pts []ui.TrainPoint
		s.mu.Lock()
		step := ev.Step + a.offset
		switch ev.Kind {
		case EvStarted:
			a.rec.State = history.RunTraining
		case EvStep:
			a.rec.State, a.rec.Step, a.rec.TokensPerSec, a.eta, a.yielding = history.RunTraining, step, ev.TokensPerSec, ev.ETA, false
			m := history.Metric{Step: step, Loss: ev.Loss, ValLoss: math.NaN(), Margin: ev.Margin, Tokens: ev.Tokens}
			pending = append(pending, m)
			pts = append(pts, ui.TrainPoint{Step: step, Loss: m.Loss, ValLoss: m.ValLoss, Margin: m.Margin, MarginLabel: ev.MarginLabel})
		case EvValidation:
			pending = append(pending, history.Metric{Step: step, Loss: math.NaN(), ValLoss: ev.ValLoss, Margin: math.NaN()})
			pts = append(pts, ui.TrainPoint{Step: step, Loss: math.NaN(), ValLoss: ev.ValLoss, Margin: math.NaN()})
		case EvYield:
			a.yielding = true
		case EvPaused:
			a.rec.State = history.RunPaused
		case EvCheckpoint:
			a.rec.BestVal, a.rec.BestStep = bestFields(a.bestSoFar(&ev))
		}
		s.mu.Unlock()
		switch ev.Kind {
		case EvCheckpoint:
			flush(true)
			// The engine reports a checkpoint once its files are renamed into place.
			s.o.Store.AddCheckpoint(a.rec.ID, history.Checkpoint{Step: step, Path: ev.Path, ValLoss: ev.ValLoss})
		case EvDone:
			flush(true)
			state := history.RunDone
			if ev.Cancelled {
				state = history.RunStopped
			}
			s.finish(a, state, "", &ev)
			return
		case EvError:
			flush(true)
			s.finish(a, history.RunFailed, friendly(ev.Err), nil)
			return
		default:
			flush(false)
		}
		s.tell(ui.TrainUpdate{Run: s.toUI(s.snapshot(a)), Points: pts})
	}
	flush(true)
	s.finish(a, history.RunFailed, "The training stopped without finishing. Resume from the last checkpoint to go on.", nil)
}

// finish records how a segment ended; a done or stopped run's adapter
// joins the library.
func (s *Service) finish(a *active, state, msg string, done *Event) {
	var best *train.Checkpoint
	s.mu.Lock()
	a.rec.State, a.rec.Error = state, msg
	a.eta, a.yielding = 0, false
	if done != nil {
		best = a.bestSoFar(done)
		a.rec.BestVal, a.rec.BestStep = bestFields(best)
	}
	rec := a.rec
	s.mu.Unlock()
	if done != nil && done.Adapter != "" {
		if id, err := s.Keep(rec, a.plan.Rank, done.Adapter, best); err != nil {
			rec.State, rec.Error = history.RunFailed, "The run finished but its adapter could not be kept: "+err.Error()
		} else {
			rec.AdapterID = id
		}
	}
	s.o.Store.UpdateRun(&rec)
	s.mu.Lock()
	a.rec = rec
	if s.active == a {
		s.active = nil // over: the next run may start, controls no longer apply
	}
	s.mu.Unlock()
	defer s.tell(ui.TrainUpdate{Run: s.toUI(rec)})
	if s.o.Notify != nil {
		switch rec.State {
		case history.RunDone:
			s.o.Notify("Training finished", fmt.Sprintf("%s is ready: switch it on from the model button in a chat.", rec.Name))
		case history.RunFailed:
			s.o.Notify("Training failed", rec.Name+": "+rec.Error)
		}
	}
}

// friendly says what went wrong and what to do.
func friendly(err error) string {
	msg := strings.TrimSuffix(err.Error(), ".")
	if strings.Contains(strings.ToLower(msg), "memory") {
		return msg + ". Lower the maximum length or the batch size under Advanced, or close other apps."
	}
	return msg + "."
}

func (s *Service) current(runID string) (*active, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil || s.active.rec.ID != runID {
		return nil, errors.New("that run is not going on")
	}
	return s.active, nil
}

// Pause implements ui.Teacher: the run holds after its current step.
func (s *Service) Pause(runID string) error {
	a, err := s.current(runID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	tr := a.tr
	if tr != nil {
		a.rec.State = history.RunPaused
	}
	s.mu.Unlock()
	if tr == nil {
		return errors.New("the run is still preparing: pause it once it trains")
	}
	tr.Pause()
	s.tell(ui.TrainUpdate{Run: s.toUI(s.snapshot(a))})
	return nil
}

// Resume implements ui.Teacher.
func (s *Service) Resume(runID string) error {
	a, err := s.current(runID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	tr := a.tr
	a.rec.State = history.RunTraining
	s.mu.Unlock()
	if tr != nil {
		tr.Resume()
	}
	s.tell(ui.TrainUpdate{Run: s.toUI(s.snapshot(a))})
	return nil
}

// Stop implements ui.Teacher: the run stops at the next step boundary and
// saves its adapter as it is.
func (s *Service) Stop(runID string) error {
	a, err := s.current(runID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	a.stopping = true
	cancel, tr := a.cancel, a.tr
	s.mu.Unlock()
	if tr != nil {
		tr.Resume() // a paused run must reach its step boundary to stop
	}
	if cancel != nil {
		cancel()
	}
	return nil
}

// ResumeFromCheckpoint implements ui.Teacher: the run goes on from its
// newest checkpoint that loads, with the data it was started with.
func (s *Service) ResumeFromCheckpoint(runID string) (ui.TrainRun, error) {
	rec, err := s.o.Store.Run(runID)
	if err != nil {
		return ui.TrainRun{}, err
	}
	if ui.RunState(rec.State).Active() || rec.State == history.RunDone {
		return ui.TrainRun{}, errors.New("only a stopped, failed or interrupted run resumes from a checkpoint")
	}
	cs, err := s.o.Store.Checkpoints(runID)
	if err != nil {
		return ui.TrainRun{}, err
	}
	var from *history.Checkpoint
	for i := len(cs) - 1; i >= 0 && from == nil; i-- {
		if _, err := lora.Load(cs[i].Path); err == nil {
			from = &cs[i]
		}
	}
	if from == nil {
		return ui.TrainRun{}, errors.New("this run has no complete checkpoint to resume from: start it again")
	}
	if from.Step >= rec.Steps {
		return ui.TrainRun{}, errors.New("the last checkpoint is the run's last step: nothing is left to train")
	}
	plan, err := decodePlan(rec.Plan)
	if err != nil {
		return ui.TrainRun{}, fmt.Errorf("this run's plan is unreadable: %w", err)
	}
	// A run started before rows went straight to the engine kept its
	// dataset folder; a later one gathers its rows again from the plan.
	prepare := func() (trainData, error) { return s.rowsFor(plan) }
	if folder := filepath.Join(rec.Dir, "data"); fileExists(filepath.Join(folder, "train.jsonl")) {
		prepare = func() (trainData, error) { return trainData{folder: folder}, nil }
	}
	if err := s.o.Store.RewindRun(runID, from.Step); err != nil {
		return ui.TrainRun{}, err
	}
	before := bestSaved(cs, from.Step)
	rec.State, rec.Error, rec.Step = history.RunPreparing, "", from.Step
	rec.BestVal, rec.BestStep = bestFields(before)
	s.mu.Lock()
	if s.active != nil {
		s.mu.Unlock()
		return ui.TrainRun{}, errBusy
	}
	a := &active{rec: rec, plan: plan, before: before}
	s.active = a
	s.mu.Unlock()
	if err := s.o.Store.UpdateRun(&a.rec); err != nil {
		s.clearActive(a)
		return ui.TrainRun{}, err
	}
	go s.execute(a, prepare, from.Path, from.Step)
	return s.toUI(s.snapshot(a)), nil
}

// Active reports the run going on (for the menubar), if any.
func (s *Service) Active() (ui.TrainRun, bool) {
	s.mu.Lock()
	a := s.active
	s.mu.Unlock()
	if a == nil {
		return ui.TrainRun{}, false
	}
	return s.toUI(s.snapshot(a)), true
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
