package engines

import (
	"os"
	"runtime"

	"perch/app/hub"
	"perch/engine"
	"perch/engine/gemma4"
	"perch/engine/mlx"
	"perch/media/picture"
)

// Pictures decodes every image this process reads: the chat's thumbnails and
// the engine's processor share it, so an attached photo is decoded once.
var Pictures = picture.NewPool(picture.PoolOptions{})

// minKVBytes is the KV budget when the model barely fits: short
// conversations only.
const minKVBytes = 256 << 20

// Options are the engine settings every front end uses: the KV cache
// may take what this machine's memory budget leaves after the rest of the
// fit estimate (weights, working set, runtime), so an oversized
// conversation is refused with a clear message up front.
func Options(dir, backend string) engine.Options {
	opts := engine.Options{Backend: backend, Pictures: Pictures}
	budget, err := hub.MachineBudget()
	if err != nil {
		return opts
	}
	d, err := gemma4.DescribeDir(dir)
	if err != nil {
		return opts
	}
	opts.MaxKVBytes = max(hub.EstimateMemory(d, FitBackend(backend), 0, budget).KVBudget(), minKVBytes)
	return opts
}

// FitBackend is the backend "auto" (or PERCH_BACKEND) will pick, for the
// fit check: MLX on a Mac where libmlxc loads, the Go backend elsewhere.
func FitBackend(backend string) string {
	if backend == "" || backend == engine.BackendAuto {
		backend = os.Getenv("PERCH_BACKEND")
	}
	switch backend {
	case engine.BackendMLX, engine.BackendGo:
		return backend
	}
	if runtime.GOOS == "darwin" && mlx.Available() == nil {
		return engine.BackendMLX
	}
	return engine.BackendGo
}
