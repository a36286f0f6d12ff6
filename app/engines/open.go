// Package engines opens models the same way for every front end (the CLI
// verbs, the GUI and the local API, perch serve): it resolves --model to a
// folder, picks the backend, sizes the KV cache to this machine's memory
// and shares one picture pool, so an engine opened anywhere has the same
// defaults.
package engines

import (
	"os"

	"perch/engine"
)

// Settings are what a front end chooses; Options adds this machine's part.
type Settings struct {
	Backend    string // auto ("" too: PERCH_BACKEND, else the best here), mlx or go
	Adapter    string // LoRA adapter folder ("" none)
	MaxContext int    // cap on the model's context (0: the model's own)
	QueueSize  int    // requests waiting for the engine (0: the engine's default)
	Exact      bool   // the Go backend's exact float path (off: int8 activations where the model fits, engine.Options.Exact)
}

// Open loads the model folder dir with s on this machine's defaults.
func Open(dir string, s Settings) (*engine.Engine, error) {
	backend := s.Backend
	if backend == "" || backend == engine.BackendAuto {
		if env := os.Getenv("PERCH_BACKEND"); env != "" {
			backend = env
		} else {
			backend = engine.BackendAuto
		}
	}
	opts := Options(dir, backend)
	opts.Adapter, opts.MaxContext, opts.QueueSize = s.Adapter, s.MaxContext, s.QueueSize
	opts.Exact = s.Exact
	return engine.Open(dir, opts)
}
