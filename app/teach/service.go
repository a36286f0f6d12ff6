package teach

import (
	"errors"
	"math"
	"path/filepath"
	"sync"

	"perch/app/history"
	"perch/app/hub"
	"perch/app/teach/dataset"
	"perch/app/teach/library"
	"perch/ui"
)

// Options are what the service needs from the app.
type Options struct {
	Store *history.Store
	// Dir holds training/<run>/ (dataset, checkpoints) and adapters/<id>/.
	Dir     string
	Trainer Trainer
	// Bases lists the models one can train on; Locate finds one's folder
	// and name.
	Bases  func() ([]ui.TeachBase, error)
	Locate func(id string) (dir, name string, err error)
	// SystemPrompt is sent before chats, so rows open with it too.
	SystemPrompt func() string
	// Budget is the memory this machine can give (hub.MachineBudget).
	Budget func() (hub.Budget, error)
	// Notify tells the user a run finished or failed (the OS notification).
	Notify func(title, body string)
	// SaveEvery is the checkpoint (and validation) cadence in steps; 0: a
	// tenth of the run, between 5 and 50.
	SaveEvery int
	// Seed, when set, seeds every run (perch gui -seed: scripted runs train
	// the same adapter each time); unset, a run's seed comes from its ID.
	Seed *uint64
}

// Service implements ui.Teacher, and ui.Adapters through its library.
type Service struct {
	o Options
	*library.Library

	mu       sync.Mutex
	active   *active // the run going on, nil when none
	watchers []func(ui.TrainUpdate)
}

var (
	_ ui.Teacher  = (*Service)(nil)
	_ ui.Adapters = (*Service)(nil)
)

// New returns the service; runs a dead process left going are marked
// interrupted first (their checkpoints stay, for "resume from checkpoint").
func New(o Options) (*Service, int, error) {
	if o.Store == nil || o.Dir == "" {
		return nil, 0, errors.New("teach: a history store and a data folder are needed")
	}
	if o.SystemPrompt == nil {
		o.SystemPrompt = func() string { return "" }
	}
	if o.Budget == nil {
		o.Budget = hub.MachineBudget
	}
	n, err := o.Store.InterruptRuns()
	if err != nil {
		return nil, 0, err
	}
	s := &Service{o: o}
	s.Library = library.New(library.Options{Store: o.Store, Dir: o.Dir, Bases: s.Bases, Locate: s.locate, Busy: s.training})
	return s, n, nil
}

// locate finds a base model's folder and name (Options.Locate).
func (s *Service) locate(id string) (dir, name string, err error) {
	if s.o.Locate == nil {
		return "", id, nil
	}
	return s.o.Locate(id)
}

// training reports whether the run going on trains into adapter id.
func (s *Service) training(adapterID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active != nil && s.active.rec.AdapterID == adapterID
}

// Bases implements ui.Teacher.
func (s *Service) Bases() ([]ui.TeachBase, error) {
	if s.o.Bases == nil {
		return nil, nil
	}
	return s.o.Bases()
}

// Summarize implements ui.Teacher.
func (s *Service) Summarize(src ui.TeachSource, share float64) (ui.DataSummary, error) {
	return dataset.Summarize(s.o.Store, s.o.SystemPrompt(), src, share)
}

// gather reads src's rows for method m, split by share.
func (s *Service) gather(src ui.TeachSource, m ui.TrainMethod, share float64) (*dataset.Data, error) {
	return dataset.Gather(s.o.Store, s.o.SystemPrompt(), src, m, share)
}

// ExportDataset writes the plan's rows as an mlx-lm dataset folder in dir
// (dataset.Data.Export) for the user to keep or to train elsewhere.
func (s *Service) ExportDataset(plan ui.TrainPlan, dir string) error {
	d, err := s.gather(plan.Source, plan.Method, plan.ValShare)
	if err != nil {
		return err
	}
	return d.Export(s.o.Store, dir, plan.Method)
}

// Runs implements ui.Teacher.
func (s *Service) Runs() ([]ui.TrainRun, error) {
	rs, err := s.o.Store.Runs()
	if err != nil {
		return nil, err
	}
	out := make([]ui.TrainRun, len(rs))
	for i, r := range rs {
		out[i] = s.toUI(r)
	}
	return out, nil
}

// Points implements ui.Teacher.
func (s *Service) Points(runID string) ([]ui.TrainPoint, error) {
	ms, err := s.o.Store.Metrics(runID)
	if err != nil {
		return nil, err
	}
	out := make([]ui.TrainPoint, len(ms))
	for i, m := range ms {
		out[i] = ui.TrainPoint{Step: m.Step, Loss: m.Loss, ValLoss: m.ValLoss, Margin: m.Margin}
	}
	return out, nil
}

// Watch implements ui.Teacher.
func (s *Service) Watch(fn func(ui.TrainUpdate)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

func (s *Service) tell(u ui.TrainUpdate) {
	s.mu.Lock()
	ws := append([]func(ui.TrainUpdate){}, s.watchers...)
	s.mu.Unlock()
	for _, w := range ws {
		w(u)
	}
}

// toUI is a run as the Teach page shows it.
func (s *Service) toUI(r history.TrainRun) ui.TrainRun {
	plan, _ := decodePlan(r.Plan) // unreadable: the page shows the run without its plan
	u := ui.TrainRun{ID: r.ID, Plan: plan, BaseName: r.BaseName, State: ui.RunState(r.State), Step: r.Step, Steps: r.Steps,
		TokensPerSec: r.TokensPerSec, Started: r.Created, Err: r.Error, BestVal: r.BestVal, BestStep: r.BestStep,
		AdapterID: r.AdapterID}
	if !u.State.Active() {
		u.Ended = r.Updated // the last write of a run that ended is its end
	}
	if cs, err := s.o.Store.Checkpoints(r.ID); err == nil && len(cs) > 0 {
		u.LastCheckpoint = cs[len(cs)-1].Step
	}
	s.mu.Lock()
	if a := s.active; a != nil && a.rec.ID == r.ID {
		u.ETA, u.Yielding = a.eta, a.yielding
	}
	s.mu.Unlock()
	if math.IsInf(u.BestVal, 0) {
		u.BestVal = math.NaN()
	}
	return u
}

// runDir is where a run keeps its dataset and segments.
func (s *Service) runDir(id string) string { return filepath.Join(s.o.Dir, "training", id) }
