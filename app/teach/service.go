package teach

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"perch/app/history"
	"perch/app/hub"
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

// Service implements ui.Teacher and ui.Adapters.
type Service struct {
	o Options

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
	return &Service{o: o}, n, nil
}

// Bases implements ui.Teacher.
func (s *Service) Bases() ([]ui.TeachBase, error) {
	if s.o.Bases == nil {
		return nil, nil
	}
	return s.o.Bases()
}

// data is what a source gives a method: rows from feedback and lines
// from a folder, each split into training and validation.
type data struct {
	rows             Rows
	folder           *folderData
	train, valid     []Row
	rawTrain, rawVal [][]byte
	notes            []string
}

// gather reads src for method m and splits it.
func (s *Service) gather(src ui.TeachSource, m ui.TrainMethod, share float64) (*data, error) {
	d := &data{}
	if src.Feedback {
		rows, err := fromFeedback(s.o.Store, s.o.SystemPrompt())
		if err != nil {
			return nil, err
		}
		d.rows = rows
		use := rows.Examples
		switch m {
		case ui.MethodKTO:
			use = rows.Rated
		case ui.MethodSFT:
		default:
			use = rows.Pairs
		}
		d.train, d.valid = split(use, share)
	}
	if src.Folder != "" {
		fd, err := readFolder(src.Folder)
		if err != nil {
			return nil, err
		}
		d.folder = fd
		pick := func(fs folderSplit) ([][]byte, int) {
			if m == ui.MethodKTO { // a folder's rows are examples or pairs, not rated answers
				return nil, len(fs.Examples) + len(fs.Pairs)
			}
			if m == ui.MethodSFT {
				return fs.Examples, len(fs.Pairs)
			}
			return fs.Pairs, len(fs.Examples)
		}
		tr, skipped := pick(fd.Train)
		if skipped > 0 {
			d.notes = append(d.notes, fmt.Sprintf("%s: %d rows of the other kind are left out (%s learns from %s)",
				filepath.Base(fd.Dir), skipped, m, map[bool]string{true: "examples", false: "pairs"}[m == ui.MethodSFT]))
		}
		if fd.HasValid {
			d.rawTrain = tr
			d.rawVal, _ = pick(fd.Valid)
		} else {
			d.rawTrain, d.rawVal = splitLines(tr, share)
			if len(d.rawVal) > 0 {
				d.notes = append(d.notes, fmt.Sprintf("%s has no valid.jsonl: %d of its rows are held out for validation",
					filepath.Base(fd.Dir), len(d.rawVal)))
			}
		}
	}
	return d, nil
}

// splitLines holds out a share of a folder's lines (every k-th).
func splitLines(lines [][]byte, share float64) (train, valid [][]byte) {
	n := int(float64(len(lines))*share + 0.5)
	if share <= 0 || len(lines) < 3 || n == 0 {
		return lines, nil
	}
	every := max(len(lines)/n, 2)
	for i, l := range lines {
		if i%every == every-1 && len(valid) < n {
			valid = append(valid, l)
		} else {
			train = append(train, l)
		}
	}
	return train, valid
}

// Summarize implements ui.Teacher.
func (s *Service) Summarize(src ui.TeachSource, share float64) (ui.DataSummary, error) {
	var sum ui.DataSummary
	for _, m := range []ui.TrainMethod{ui.MethodSFT, ui.MethodDPO} {
		d, err := s.gather(src, m, share)
		if err != nil {
			return sum, err
		}
		n := len(d.train) + len(d.valid) + len(d.rawTrain) + len(d.rawVal)
		if m == ui.MethodSFT {
			sum.Examples = n
			continue
		}
		sum.Pairs, sum.Unpaired, sum.Rated = n, d.rows.Unpaired, len(d.rows.Rated)
		for _, r := range d.rows.Examples { // one per taught answer
			if r.Media() > 0 {
				sum.Media++
			}
		}
		if fd := d.folder; fd != nil {
			sum.Media += fd.Train.Media + fd.Valid.Media
			if !fd.HasValid && share > 0 {
				sum.Notes = append(sum.Notes, fmt.Sprintf("%s has no valid.jsonl: %.0f%% of its rows are held out for validation",
					filepath.Base(fd.Dir), share*100))
			}
		}
		sum.Preview = previews(d)
	}
	return sum, nil
}

func previews(d *data) []ui.DataPreview {
	var out []ui.DataPreview
	add := func(r Row) {
		if len(out) >= 8 {
			return
		}
		prompt := ""
		if n := len(r.Prompt); n > 0 {
			prompt = r.Prompt[n-1].Text
		}
		out = append(out, ui.DataPreview{Prompt: prompt, Chosen: r.Chosen, Rejected: r.Rejected, Media: r.Media(), Origin: r.Origin})
	}
	for _, r := range d.rows.Pairs {
		add(r)
	}
	for _, r := range d.rows.Examples {
		add(r)
	}
	if d.folder != nil {
		for _, r := range d.folder.Train.Preview {
			add(r)
		}
	}
	return out
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

// removeAll deletes a folder Perch made, refusing anything outside Dir.
func (s *Service) removeAll(dir string) error {
	rel, err := filepath.Rel(s.o.Dir, dir)
	if err != nil || rel == "." || rel == ".." || filepath.IsAbs(rel) || len(rel) > 1 && rel[:2] == ".." {
		return fmt.Errorf("teach: %s is not inside %s", dir, s.o.Dir)
	}
	return os.RemoveAll(dir)
}
