package engine

import (
	"fmt"
	"runtime"

	"perch/engine/gocpu"
	"perch/engine/mlx"
	"perch/engine/tensor"
)

// Backend names accepted by Options.Backend.
const (
	BackendAuto = "auto"
	BackendMLX  = "mlx"
	BackendGo   = "go"
)

// newBackend makes the backend on the calling (engine) thread. "auto" takes
// MLX where it runs on a GPU (Metal on macOS) and the Go backend elsewhere:
// MLX's CPU kernels for quantized weights are far slower than ours.
// With intPrefill (intDecode), the Go backend prefills (decodes) with int8
// activations.
func newBackend(name string, threads int, intPrefill, intDecode bool) (tensor.Backend, error) {
	goOpts := gocpu.Options{Threads: threads, IntPrefill: intPrefill, IntDecode: intDecode}
	switch name {
	case BackendGo:
		return gocpu.New(goOpts), nil
	case BackendMLX:
		b, err := mlx.New()
		if err != nil {
			return nil, fmt.Errorf("MLX backend: %w", err)
		}
		return b, nil
	case BackendAuto, "":
		if runtime.GOOS == "darwin" {
			if b, err := mlx.New(); err == nil {
				if b.Device() == "gpu" {
					return b, nil
				}
				b.Close()
			}
		}
		return gocpu.New(goOpts), nil
	}
	return nil, fmt.Errorf("unknown backend %q (want auto, mlx or go)", name)
}
