package main

import (
	"perch/app/hub"
	"perch/engine"
	"perch/media/picture"
)

// pictures decodes every image this process reads: the chat's thumbnails and
// the engine's processor share it, so an attached photo is decoded once.
var pictures = picture.NewPool(picture.PoolOptions{})

// kvHeadroom is kept free beside the weights and the KV cache (activations,
// the towers' working set, the rest of the app).
const kvHeadroom = 1 << 30

// engineOptions are the engine settings every front end uses: the KV cache
// may take what this machine's memory budget leaves after the weights, so
// an oversized conversation is refused with a clear message up front.
func engineOptions(dir, backend string) engine.Options {
	opts := engine.Options{Backend: backend, Pictures: pictures}
	budget, err := hub.MachineBudget()
	if err != nil {
		return opts
	}
	w, err := hub.LocalWeights(dir)
	if err != nil {
		return opts
	}
	if left := budget.Usable - w.Text - w.Towers - kvHeadroom; left > 0 {
		opts.MaxKVBytes = left
	} else {
		opts.MaxKVBytes = 256 << 20 // the model barely fits: short conversations only
	}
	return opts
}
