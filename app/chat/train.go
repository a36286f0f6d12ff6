package chat

import "context"

// AcquireEngine loads the chosen model if needed and lends the engine
// itself (for work beyond Generate, such as training); it stays loaded,
// never unloaded for idleness, until release.
func (r *Runtime) AcquireEngine(ctx context.Context) (eng Engine, release func(), err error) {
	return r.acquire(ctx, nil)
}
