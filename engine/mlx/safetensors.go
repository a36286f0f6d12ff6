package mlx

import (
	"fmt"

	"perch/engine/tensor"
)

// LoadSafetensors opens a safetensors file with mlx_load_safetensors: arrays
// are read lazily on first evaluation (MLX's loader runs on the CPU stream).
// The arrays are in the arena like any op result: Pin the ones to keep.
// A failure is returned, not recorded as the backend's error.
func (b *Backend) LoadSafetensors(path string) (map[string]tensor.Tensor, error) {
	if b.err != nil {
		return nil, b.err
	}
	fail := func(m cmsg) error { return fmt.Errorf("mlx: load %s: %s", path, goString(m)) }
	mp, m := cLoadSafetensors(path)
	if m != nil {
		err := fail(m)
		cMapFree(mp, mapIter{})
		return nil, err
	}
	it, m := cMapIter(mp)
	if m != nil {
		err := fail(m)
		cMapFree(mp, mapIter{})
		return nil, err
	}
	defer cMapFree(mp, it)
	out := map[string]tensor.Tensor{}
	for {
		key, h, done, m := cMapNext(it)
		if m != nil {
			err := fail(m)
			for _, t := range out {
				b.release(t.(*Array))
			}
			return nil, err
		}
		if done {
			return out, nil
		}
		out[key] = b.track(h)
	}
}

// release frees one unpinned arena array at once.
func (b *Backend) release(a *Array) {
	if a.pinned || isNull(a.h) {
		return
	}
	b.live = removeAt(b.live, a.slot)
	cFreeMany([]handle{a.h})
	a.h = handle{}
}
