// Package kvcache holds attention keys and values across steps: Full (a
// port of mlx-lm's KVCache: grows in steps of 256) for full-attention
// layers and Window (a ring with slack) for sliding layers, each with the
// masks a chunk of L queries needs. Buffers are [B, heads, S, head_dim];
// a cache pins what it keeps.
package kvcache

import (
	"perch/engine/tensor"
)

// Cache is one layer's keys and values.
type Cache interface {
	// Mask is the attention mask for the next L queries (call before
	// Update). blocks, when set (len L), gives each new position an
	// image/video block id (or -1): positions of one block also see each
	// other in both directions.
	Mask(b tensor.Backend, L int, blocks []int) tensor.Mask
	// Update appends k, v [B, H, L, D] and returns what attention should see.
	Update(b tensor.Backend, k, v tensor.Tensor) (keys, values tensor.Tensor)
	// Offset counts every token seen (the RoPE position of the next one).
	Offset() int
	// Trim drops the last n tokens when possible and returns how many it dropped.
	Trim(n int) int
	// CanTrim reports whether Trim(n) would drop all n.
	CanTrim(n int) bool
	// State is what must be evaluated to materialise the cache.
	State() []tensor.Tensor
	// Release unpins the buffers.
	Release(b tensor.Backend)
}

// States is the State of every cache of a model (nil entries: layers that
// share another layer's cache).
func States(caches []Cache) []tensor.Tensor {
	var out []tensor.Tensor
	for _, c := range caches {
		if c != nil {
			out = append(out, c.State()...)
		}
	}
	return out
}

const step = 256

// replace pins the new buffers and unpins the old ones.
func replace(b tensor.Backend, oldK, oldV, k, v tensor.Tensor) {
	if k != oldK {
		b.Pin(k, v)
		if oldK != nil {
			b.Unpin(oldK, oldV)
		}
	}
}

// Full is a growing cache for full-attention layers.
type Full struct {
	keys, values tensor.Tensor
	offset       int
}

func (c *Full) Offset() int { return c.offset }

func (c *Full) Mask(b tensor.Backend, L int, blocks []int) tensor.Mask {
	switch {
	case blocks != nil && L > 1:
		pos := make([]int, c.offset+L)
		for i := range pos {
			pos[i] = i
		}
		return tensor.Mask{Kind: tensor.MaskArray, Array: maskOf(b, c.offset, L, pos, 0, blocks)}
	case L > 1:
		return tensor.Mask{Kind: tensor.MaskCausal}
	}
	return tensor.Mask{}
}

func (c *Full) Update(b tensor.Backend, k, v tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	prev := c.offset
	ks, vs := k.Shape(), v.Shape()
	L := ks[2]
	oldK, oldV := c.keys, c.values
	keys, values := c.keys, c.values
	if keys == nil || prev+L > keys.Shape()[2] {
		n := (step + L - 1) / step * step
		newK := b.Zeros([]int{ks[0], ks[1], n, ks[3]}, k.DType())
		newV := b.Zeros([]int{vs[0], vs[1], n, vs[3]}, v.DType())
		if keys != nil {
			if prev%step != 0 {
				keys, values = b.Slice(keys, 2, 0, prev), b.Slice(values, 2, 0, prev)
			}
			keys, values = b.Concat(2, keys, newK), b.Concat(2, values, newV)
		} else {
			keys, values = newK, newV
		}
	}
	c.offset += L
	keys = b.SliceUpdate(keys, k, 2, prev)
	values = b.SliceUpdate(values, v, 2, prev)
	c.keys, c.values = keys, values
	replace(b, oldK, oldV, keys, values)
	return b.Slice(keys, 2, 0, c.offset), b.Slice(values, 2, 0, c.offset)
}

func (c *Full) Trim(n int) int {
	n = min(c.offset, n)
	c.offset -= n
	return n
}

func (c *Full) CanTrim(n int) bool { return n <= c.offset }

func (c *Full) State() []tensor.Tensor {
	if c.keys == nil {
		return nil
	}
	return []tensor.Tensor{c.keys, c.values}
}

func (c *Full) Release(b tensor.Backend) {
	if c.keys != nil {
		b.Unpin(c.keys, c.values)
	}
	c.keys, c.values, c.offset = nil, nil, 0
}

// maskOf is bool [L, len(keys)] for queries at positions first..first+L-1:
// a key at position p (-1: empty slot) is visible when p <= q and, with a
// window, q-p < window; or when both are new positions of one block.
func maskOf(b tensor.Backend, first, L int, keys []int, window int, blocks []int) tensor.Tensor {
	S := len(keys)
	m := make([]bool, L*S)
	for i := 0; i < L; i++ {
		q := first + i
		row := m[i*S : (i+1)*S]
		for k, p := range keys {
			if p < 0 {
				continue
			}
			row[k] = p <= q && (window <= 0 || q-p < window)
			if !row[k] && blocks != nil && p >= first && blocks[i] >= 0 && blocks[i] == blocks[p-first] {
				row[k] = true
			}
		}
	}
	return b.FromBool(m, []int{L, S})
}

// OverlayMask is the [L, L] mask of a fresh sequence: causal within the
// window (0: none), plus same-block visibility when blocks is set.
func OverlayMask(b tensor.Backend, L, window int, blocks []int) tensor.Tensor {
	pos := make([]int, L)
	for i := range pos {
		pos[i] = i
	}
	return maskOf(b, 0, L, pos, window, blocks)
}
