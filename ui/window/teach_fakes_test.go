package window

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"perch/ui"
)

// fakeFeedback records ratings, corrections and adapter choices over a
// fakeChat's messages.
type fakeFeedback struct {
	chat     *fakeChat
	mu       sync.Mutex
	ratings  map[string]ui.Rating // message id → rating
	fixes    map[string]string    // message id → corrected text
	adapters map[string]string    // conversation id → adapter id ("" key: new chats)
	names    map[string]string    // adapter id → name
}

func newFakeFeedback(c *fakeChat) *fakeFeedback {
	return &fakeFeedback{chat: c, ratings: map[string]ui.Rating{}, fixes: map[string]string{},
		adapters: map[string]string{}, names: map[string]string{"a1": "my-style"}}
}

func (f *fakeFeedback) Rate(convID, id string, r ui.Rating) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ratings[id] = r
	return nil
}

func (f *fakeFeedback) rating(id string) ui.Rating {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ratings[id]
}

func (f *fakeFeedback) Correct(convID, id, text string) (ui.Message, error) {
	f.mu.Lock()
	f.fixes[id] = text
	f.mu.Unlock()
	f.chat.mu.Lock()
	defer f.chat.mu.Unlock()
	for i, m := range f.chat.msgs[convID] {
		if m.ID == id {
			m.Text, m.Edited, m.Rating = text, true, ui.Unrated
			f.chat.msgs[convID][i] = m
			return m, nil
		}
	}
	return ui.Message{}, errors.New("no such answer")
}

func (f *fakeFeedback) Adapter(convID string) (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.adapters[convID]
	if !ok {
		id = f.adapters[""]
	}
	return id, f.names[id]
}

func (f *fakeFeedback) SetAdapter(convID, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adapters[convID] = id
	f.adapters[""] = id
	return nil
}

// fakeAdapters is a library of two adapters, one for another model.
type fakeAdapters struct {
	mu    sync.Mutex
	items []ui.AdapterInfo
	calls []string
}

func newFakeAdapters() *fakeAdapters {
	return &fakeAdapters{items: []ui.AdapterInfo{
		{ID: "a1", Name: "my-style", Base: "e2b", BaseName: "Gemma-4 E2B", Method: ui.MethodDPO, Created: time.Now(),
			Steps: 200, BestVal: 1.2345, BestStep: 150, Size: 12 << 20, Rank: 8},
		{ID: "a2", Name: "legal", Base: "31b", BaseName: "Gemma-4 31B", BestVal: math.NaN(), Size: 40 << 20},
	}}
}

func (a *fakeAdapters) Adapters() ([]ui.AdapterInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ui.AdapterInfo(nil), a.items...), nil
}
func (a *fakeAdapters) RenameAdapter(id, name string) error {
	a.log("rename " + id + " " + name)
	return nil
}
func (a *fakeAdapters) DeleteAdapter(id string) error { a.log("delete " + id); return nil }
func (a *fakeAdapters) ExportAdapter(id, dir string) (string, error) {
	a.log("export " + id)
	return dir + "/" + id, nil
}
func (a *fakeAdapters) ImportAdapter(dir string) (ui.AdapterInfo, error) {
	return ui.AdapterInfo{}, errors.New(dir + " has no adapter_config.json")
}
func (a *fakeAdapters) log(s string) { a.mu.Lock(); a.calls = append(a.calls, s); a.mu.Unlock() }

// fakeTeacher answers the Teach page from fixed data; tests drive runs
// with emit.
type fakeTeacher struct {
	mu       sync.Mutex
	summary  ui.DataSummary
	estimate ui.TrainEstimate
	runs     []ui.TrainRun
	points   map[string][]ui.TrainPoint
	watchers []func(ui.TrainUpdate)
	calls    []string
	started  []ui.TrainPlan
}

func newFakeTeacher() *fakeTeacher {
	return &fakeTeacher{points: map[string][]ui.TrainPoint{},
		estimate: ui.TrainEstimate{Fits: true, Memory: 3 << 30, Available: 16 << 30, Duration: 7 * time.Minute,
			Basis: "Measured on this computer's last run.", Rows: 9, ValRows: 1}}
}

func (t *fakeTeacher) Bases() ([]ui.TeachBase, error) {
	return []ui.TeachBase{{ID: "e2b", Name: "Gemma-4 E2B"}}, nil
}

func (t *fakeTeacher) Summarize(src ui.TeachSource, valShare float64) (ui.DataSummary, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.summary, nil
}

func (t *fakeTeacher) Estimate(p ui.TrainPlan) (ui.TrainEstimate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.estimate, nil
}

func (t *fakeTeacher) Start(p ui.TrainPlan) (ui.TrainRun, error) {
	t.mu.Lock()
	r := ui.TrainRun{ID: fmt.Sprintf("r%d", len(t.runs)+1), Plan: p, BaseName: "Gemma-4 E2B", State: ui.RunPreparing,
		Steps: p.Steps, Started: time.Now(), BestVal: math.NaN()}
	t.runs = append([]ui.TrainRun{r}, t.runs...)
	t.started = append(t.started, p)
	t.mu.Unlock()
	return r, nil
}

func (t *fakeTeacher) control(what, id string, s ui.RunState) error {
	t.mu.Lock()
	t.calls = append(t.calls, what+" "+id)
	var r ui.TrainRun
	for i := range t.runs {
		if t.runs[i].ID == id {
			t.runs[i].State = s
			r = t.runs[i]
		}
	}
	t.mu.Unlock()
	t.emit(ui.TrainUpdate{Run: r})
	return nil
}

func (t *fakeTeacher) Pause(id string) error  { return t.control("pause", id, ui.RunPaused) }
func (t *fakeTeacher) Resume(id string) error { return t.control("resume", id, ui.RunTraining) }
func (t *fakeTeacher) Stop(id string) error   { return t.control("stop", id, ui.RunStopped) }
func (t *fakeTeacher) ResumeFromCheckpoint(id string) (ui.TrainRun, error) {
	return ui.TrainRun{}, errors.New("not in this fake")
}

func (t *fakeTeacher) Runs() ([]ui.TrainRun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ui.TrainRun(nil), t.runs...), nil
}

func (t *fakeTeacher) Points(id string) ([]ui.TrainPoint, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ui.TrainPoint(nil), t.points[id]...), nil
}

func (t *fakeTeacher) Watch(fn func(ui.TrainUpdate)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watchers = append(t.watchers, fn)
}

// emit records u's run and points and tells the watchers.
func (t *fakeTeacher) emit(u ui.TrainUpdate) {
	t.mu.Lock()
	for i := range t.runs {
		if t.runs[i].ID == u.Run.ID {
			t.runs[i] = u.Run
		}
	}
	t.points[u.Run.ID] = append(t.points[u.Run.ID], u.Points...)
	ws := append([]func(ui.TrainUpdate){}, t.watchers...)
	t.mu.Unlock()
	for _, w := range ws {
		w(u)
	}
}

func (t *fakeTeacher) log() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.calls...)
}

// teachHarness is the harness with the Teach services.
type teachHarness struct {
	*harness
	teacher  *fakeTeacher
	adapters *fakeAdapters
	feedback *fakeFeedback
}

func newTeachHarness(t *testing.T, answers ...script) *teachHarness {
	th := &teachHarness{teacher: newFakeTeacher(), adapters: newFakeAdapters()}
	th.harness = newHarnessWith(t, func(h *harness, d *Deps) {
		th.feedback = newFakeFeedback(h.chat)
		d.Teacher, d.Adapters, d.Feedback = th.teacher, th.adapters, th.feedback
	}, answers...)
	return th
}
