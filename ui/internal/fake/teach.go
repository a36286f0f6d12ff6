package fake

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"perch/ui"
)

// Feedback records ratings, corrections and adapter choices over a
// fakeChat's messages.
type Feedback struct {
	chat     *Chat
	mu       sync.Mutex
	ratings  map[string]ui.Rating // message id → rating
	Fixes    map[string]string    // message id → corrected text
	Adapters map[string]string    // conversation id → adapter id ("" key: new chats)
	names    map[string]string    // adapter id → name
}

func NewFeedback(c *Chat) *Feedback {
	return &Feedback{chat: c, ratings: map[string]ui.Rating{}, Fixes: map[string]string{},
		Adapters: map[string]string{}, names: map[string]string{"a1": "my-style"}}
}

func (f *Feedback) Rate(convID, id string, r ui.Rating) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ratings[id] = r
	return nil
}

func (f *Feedback) Rating(id string) ui.Rating {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ratings[id]
}

func (f *Feedback) Correct(convID, id, text string) (ui.Message, error) {
	f.mu.Lock()
	f.Fixes[id] = text
	f.mu.Unlock()
	f.chat.Mu.Lock()
	defer f.chat.Mu.Unlock()
	for i, m := range f.chat.Msgs[convID] {
		if m.ID == id {
			m.Text, m.Edited, m.Rating = text, true, ui.Unrated
			f.chat.Msgs[convID][i] = m
			return m, nil
		}
	}
	return ui.Message{}, errors.New("no such answer")
}

func (f *Feedback) Adapter(convID string) (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.Adapters[convID]
	if !ok {
		id = f.Adapters[""]
	}
	return id, f.names[id]
}

func (f *Feedback) SetAdapter(convID, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Adapters[convID] = id
	f.Adapters[""] = id
	return nil
}

// Adapters is a library of two adapters, one for another model.
type Adapters struct {
	mu    sync.Mutex
	items []ui.AdapterInfo
	calls []string
}

func NewAdapters() *Adapters {
	return &Adapters{items: []ui.AdapterInfo{
		{ID: "a1", Name: "my-style", Base: "e2b", BaseName: "Gemma-4 E2B", Method: ui.MethodDPO, Created: time.Now(),
			Steps: 200, BestVal: 1.2345, BestStep: 150, Size: 12 << 20, Rank: 8},
		{ID: "a2", Name: "legal", Base: "31b", BaseName: "Gemma-4 31B", BestVal: math.NaN(), Size: 40 << 20},
	}}
}

func (a *Adapters) Adapters() ([]ui.AdapterInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ui.AdapterInfo(nil), a.items...), nil
}
func (a *Adapters) RenameAdapter(id, name string) error {
	a.log("rename " + id + " " + name)
	return nil
}
func (a *Adapters) DeleteAdapter(id string) error { a.log("delete " + id); return nil }
func (a *Adapters) ExportAdapter(id, dir string) (string, error) {
	a.log("export " + id)
	return dir + "/" + id, nil
}
func (a *Adapters) ImportAdapter(dir string) (ui.AdapterInfo, error) {
	return ui.AdapterInfo{}, errors.New(dir + " has no adapter_config.json")
}
func (a *Adapters) log(s string) { a.mu.Lock(); a.calls = append(a.calls, s); a.mu.Unlock() }

// Teacher answers the Teach page from fixed data; tests drive runs
// with emit.
type Teacher struct {
	mu        sync.Mutex
	Summary   ui.DataSummary
	Estimated ui.TrainEstimate
	runs      []ui.TrainRun
	points    map[string][]ui.TrainPoint
	watchers  []func(ui.TrainUpdate)
	calls     []string
	Started   []ui.TrainPlan
}

func NewTeacher() *Teacher {
	return &Teacher{points: map[string][]ui.TrainPoint{},
		Estimated: ui.TrainEstimate{Fits: true, Memory: 3 << 30, Available: 16 << 30, Duration: 7 * time.Minute,
			Basis: "Measured on this computer's last run.", Rows: 9, ValRows: 1}}
}

func (t *Teacher) Bases() ([]ui.TeachBase, error) {
	return []ui.TeachBase{{ID: "e2b", Name: "Gemma-4 E2B"}}, nil
}

func (t *Teacher) Summarize(src ui.TeachSource, valShare float64) (ui.DataSummary, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.Summary, nil
}

func (t *Teacher) Estimate(p ui.TrainPlan) (ui.TrainEstimate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.Estimated, nil
}

func (t *Teacher) Start(p ui.TrainPlan) (ui.TrainRun, error) {
	t.mu.Lock()
	r := ui.TrainRun{ID: fmt.Sprintf("r%d", len(t.runs)+1), Plan: p, BaseName: "Gemma-4 E2B", State: ui.RunPreparing,
		Steps: p.Steps, Started: time.Now(), BestVal: math.NaN()}
	t.runs = append([]ui.TrainRun{r}, t.runs...)
	t.Started = append(t.Started, p)
	t.mu.Unlock()
	return r, nil
}

func (t *Teacher) control(what, id string, s ui.RunState) error {
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
	t.Emit(ui.TrainUpdate{Run: r})
	return nil
}

func (t *Teacher) Pause(id string) error  { return t.control("pause", id, ui.RunPaused) }
func (t *Teacher) Resume(id string) error { return t.control("resume", id, ui.RunTraining) }
func (t *Teacher) Stop(id string) error   { return t.control("stop", id, ui.RunStopped) }
func (t *Teacher) ResumeFromCheckpoint(id string) (ui.TrainRun, error) {
	return ui.TrainRun{}, errors.New("not in this fake")
}

func (t *Teacher) Runs() ([]ui.TrainRun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ui.TrainRun(nil), t.runs...), nil
}

func (t *Teacher) Points(id string) ([]ui.TrainPoint, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ui.TrainPoint(nil), t.points[id]...), nil
}

func (t *Teacher) Watch(fn func(ui.TrainUpdate)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watchers = append(t.watchers, fn)
}

// Emit records u's run and points and tells the watchers.
func (t *Teacher) Emit(u ui.TrainUpdate) {
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

func (t *Teacher) Log() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.calls...)
}
