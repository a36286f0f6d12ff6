package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"perch/engine"
	"perch/ui"
)

// Model is what a chat asks of the model it is lent: answers (old turns
// leave the model's view through the request's context policy, inside the
// engine's Prepare).
type Model interface {
	engine.Generator
}

// Lent is a Model lent to one answer: Generate gives it back when the
// answer ends, Release when no answer will be asked of it.
type Lent interface {
	Model
	Release()
}

// Engine is a loaded model: it answers, measures, trains adapters on its
// weights (the Teach page) and closes. *engine.Engine is one.
type Engine interface {
	Model
	Train(ctx context.Context, req engine.TrainRequest) (*engine.TrainRun, error)
	Close() error
}

// Located is a model id resolved to a folder on disk.
type Located struct {
	Dir                  string
	Name                 string // "Gemma-4 E2B"
	Vision, Audio, Video bool   // from the catalog or config.json, before loading
}

// Runtime owns the current model: which one is chosen, loading it on first
// use (or on Use), unloading it on request or after IdleUnload without use.
// It implements ui.Model.
type Runtime struct {
	locate func(id string) (Located, error)
	open   func(dir string) (Engine, engine.ModelInfo, error)
	onUse  func(id string) // remembers the choice (settings)

	// IdleUnload frees the model after this long unused (0: never).
	IdleUnload time.Duration

	mu       sync.Mutex
	state    ui.ModelState
	dir      string
	eng      Engine
	loading  chan struct{} // closed when the load in progress ends
	loadErr  error
	active   int // generations holding the engine
	idle     *time.Timer
	watchers []func(ui.ModelState)
	changes  []change // told to the watchers in order, by one goroutine
	telling  bool     // that goroutine runs
}

// change is a state and the watchers it is for.
type change struct {
	s  ui.ModelState
	ws []func(ui.ModelState)
}

// NewRuntime returns a runtime with no model chosen. locate finds a model's
// folder; open loads it; onUse (optional) is told each model the user picks.
func NewRuntime(locate func(string) (Located, error), open func(string) (Engine, engine.ModelInfo, error), onUse func(string)) *Runtime {
	return &Runtime{locate: locate, open: open, onUse: onUse, IdleUnload: 30 * time.Minute}
}

var _ ui.Model = (*Runtime)(nil)
var _ Models = (*Runtime)(nil)

// State implements ui.Model.
func (r *Runtime) State() ui.ModelState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Watch implements ui.Model.
func (r *Runtime) Watch(fn func(ui.ModelState)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers = append(r.watchers, fn)
}

// setLocked updates the state and tells the watchers (r.mu held), off the
// caller's goroutine and in order: a watcher never sees "loading" after the
// "loaded" that followed it (a goroutine per change could tell them out of order).
func (r *Runtime) setLocked(s ui.ModelState) {
	r.state = s
	r.changes = append(r.changes, change{s, append([]func(ui.ModelState){}, r.watchers...)})
	if !r.telling {
		r.telling = true
		go r.tell()
	}
}

// tell tells the watchers each queued change, oldest first, until none is left.
func (r *Runtime) tell() {
	for {
		r.mu.Lock()
		if len(r.changes) == 0 {
			r.telling = false
			r.mu.Unlock()
			return
		}
		c := r.changes[0]
		r.changes = r.changes[1:]
		r.mu.Unlock()
		for _, w := range c.ws {
			w(c.s)
		}
	}
}

// Select chooses a model without loading it (at startup, so the app opens
// at once); the first message or Preload loads it.
func (r *Runtime) Select(id string) error {
	if id == "" {
		return nil
	}
	loc, err := r.locate(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.setLocked(ui.ModelState{ID: id, Name: id, Err: err.Error()})
		return err
	}
	r.closeLocked()
	r.dir = loc.Dir
	r.setLocked(ui.ModelState{ID: id, Name: loc.Name, Vision: loc.Vision, Audio: loc.Audio, Video: loc.Video,
		Defaults: modelDefaults(loc.Dir)})
	return nil
}

// Use implements ui.Model: choose id and load it now.
func (r *Runtime) Use(id string) error {
	if err := r.Select(id); err != nil {
		return err
	}
	if r.onUse != nil {
		r.onUse(id)
	}
	_, release, err := r.acquire(context.Background(), nil)
	if release != nil {
		release()
	}
	return err
}

// Preload starts loading the chosen model in the background.
func (r *Runtime) Preload() {
	go func() {
		if _, release, err := r.acquire(context.Background(), nil); err == nil {
			release()
		}
	}()
}

// Unload implements ui.Model.
func (r *Runtime) Unload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active > 0 || r.eng == nil {
		return // never pull the model from under an answer
	}
	r.closeLocked()
	s := r.state
	s.Loaded = false
	r.setLocked(s)
}

func (r *Runtime) closeLocked() {
	if r.idle != nil {
		r.idle.Stop()
		r.idle = nil
	}
	if r.eng != nil {
		r.eng.Close()
		r.eng = nil
	}
}

// Close frees the model.
func (r *Runtime) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
}

// Acquire implements Models. The engine stays loaded while in use; the
// generation's end (its context) releases it.
func (r *Runtime) Acquire(ctx context.Context, status func(string)) (Lent, error) {
	eng, release, err := r.acquire(ctx, status)
	if err != nil {
		return nil, err
	}
	return &held{Engine: eng, release: release}, nil
}

func (r *Runtime) acquire(ctx context.Context, status func(string)) (Engine, func(), error) {
	for {
		r.mu.Lock()
		if r.state.ID == "" {
			r.mu.Unlock()
			return nil, nil, errors.New("no model chosen: pick one in Models")
		}
		if r.eng != nil {
			eng := r.eng
			r.active++
			if r.idle != nil {
				r.idle.Stop()
			}
			r.mu.Unlock()
			return eng, r.releaser(eng), nil
		}
		if r.loading == nil {
			r.startLoadLocked()
		}
		wait, name := r.loading, r.state.Name
		r.mu.Unlock()
		if status != nil {
			status(fmt.Sprintf("Loading %s…", name))
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		r.mu.Lock()
		err := r.loadErr
		r.mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
	}
}

func (r *Runtime) startLoadLocked() {
	done := make(chan struct{})
	r.loading, r.loadErr = done, nil
	dir, id := r.dir, r.state.ID
	s := r.state
	s.Loading, s.Err = true, ""
	r.setLocked(s)
	go func() {
		eng, info, err := r.open(dir)
		r.mu.Lock()
		defer r.mu.Unlock()
		defer close(done)
		r.loading = nil
		if r.state.ID != id || r.dir != dir { // another model was chosen meanwhile
			if eng != nil {
				eng.Close()
			}
			r.loadErr = errors.New("another model was chosen")
			return
		}
		s := r.state
		s.Loading = false
		if err != nil {
			r.loadErr = fmt.Errorf("could not load %s: %w", s.Name, err)
			s.Err = r.loadErr.Error()
			r.setLocked(s)
			return
		}
		r.eng = eng
		s.Loaded, s.Vision, s.Audio, s.Video = true, info.Vision, info.Audio, info.Video
		r.setLocked(s)
		r.armIdleLocked()
	}()
}

func (r *Runtime) releaser(eng Engine) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.active--
			if r.eng == eng {
				r.armIdleLocked()
			}
		})
	}
}

func (r *Runtime) armIdleLocked() {
	if r.IdleUnload <= 0 || r.active > 0 {
		return
	}
	if r.idle != nil {
		r.idle.Stop()
	}
	r.idle = time.AfterFunc(r.IdleUnload, r.Unload)
}

// held is an engine lent to one generation; the request's done hook gives
// it back (after the last event, or when Generate refuses the request).
type held struct {
	Engine
	release func()
}

// Release gives the engine back without an answer.
func (h *held) Release() { h.release() }

func (h *held) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	defer func() {
		if p := recover(); p != nil {
			h.release()
			panic(p)
		}
	}()
	if prev := req.OnDone; prev != nil {
		req.OnDone = func() { prev(); h.release() }
	} else {
		req.OnDone = h.release
	}
	return h.Engine.Generate(ctx, req)
}
