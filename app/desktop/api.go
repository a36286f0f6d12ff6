package desktop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"perch/app/chat"
	"perch/app/server"
	"perch/engine"
	"perch/ui"
)

// localAPI is the OpenAI-compatible server Settings turns on: loopback only,
// answering with whatever model the app has chosen (loading it on demand).
type localAPI struct {
	rt  *chat.Runtime
	mu  sync.Mutex
	srv *server.Server
	at  string
	// adapters are the model's adapters it offers as "<model>+<name>", and
	// the name of the app's current choice (nil: none).
	adapters func(baseID string) ([]server.AdapterModel, string)
}

func newLocalAPI(rt *chat.Runtime) *localAPI {
	a := &localAPI{rt: rt}
	rt.Watch(func(s ui.ModelState) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.srv != nil {
			a.srv.SetModel(runtimeGenerator{rt}, a.model(s))
		}
	})
	return a
}

// Set starts (on port) or stops the server.
func (a *localAPI) Set(on bool, port int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if a.srv != nil && (!on || a.at != addr) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		a.srv.Shutdown(ctx)
		cancel()
		a.srv, a.at = nil, ""
	}
	if !on || a.srv != nil {
		return nil
	}
	srv := server.New(server.Options{Engine: runtimeGenerator{a.rt}, Model: a.model(a.rt.State()), Adapters: a.offered})
	if _, err := srv.Start(addr); err != nil {
		return fmt.Errorf("the local API could not listen on %s (%v): choose another port", addr, err)
	}
	a.srv, a.at = srv, addr
	return nil
}

// Close stops the server.
func (a *localAPI) Close() { a.Set(false, 0) }

func (a *localAPI) model(s ui.ModelState) server.ModelInfo {
	return server.ModelInfo{ID: s.Name, Created: time.Now(), Vision: s.Vision, Audio: s.Audio, Video: s.Video}
}

// offered are the current model's adapters, read at each request.
func (a *localAPI) offered() ([]server.AdapterModel, string) {
	s := a.rt.State()
	if a.adapters == nil || s.ID == "" {
		return nil, ""
	}
	return a.adapters(s.ID)
}

// runtimeGenerator answers with the runtime's model, loading it if needed.
type runtimeGenerator struct{ rt *chat.Runtime }

func (g runtimeGenerator) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	gen, err := g.rt.Acquire(ctx, nil)
	if err != nil {
		return nil, err
	}
	return gen.Generate(ctx, req)
}
