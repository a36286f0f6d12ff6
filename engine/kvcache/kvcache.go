// Package kvcache ports mlx-lm's KVCache (full attention: grows in steps of
// 256) and RotatingKVCache (sliding attention: a ring of the window size)
// onto tensor.Backend, with the masks each needs for a chunk of L queries.
// Buffers are [B, heads, S, head_dim]; the cache pins what it keeps.
package kvcache

import (
	"perch/engine/tensor"
)

// Cache is one layer's keys and values.
type Cache interface {
	// Mask is the attention mask for the next L queries (call before Update).
	Mask(b tensor.Backend, L int) tensor.Mask
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

func (c *Full) Mask(b tensor.Backend, L int) tensor.Mask {
	if L > 1 {
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

// Rotating keeps the last MaxSize tokens (keep = 0) for sliding layers.
type Rotating struct {
	MaxSize      int
	keys, values tensor.Tensor
	offset       int
	idx          int
}

// NewRotating makes a sliding-window cache of the given window.
func NewRotating(window int) *Rotating { return &Rotating{MaxSize: window} }

func (c *Rotating) Offset() int { return c.offset }

func (c *Rotating) Mask(b tensor.Backend, L int) tensor.Mask {
	if L <= 1 {
		return tensor.Mask{}
	}
	off := min(c.MaxSize-1, c.offset)
	if off+L > c.MaxSize || c.offset > 0 {
		return tensor.Mask{Kind: tensor.MaskArray, Array: CausalMask(b, L, off, c.MaxSize)}
	}
	return tensor.Mask{Kind: tensor.MaskCausal}
}

// CausalMask is bool [L, off+L]: query q sees key k iff q+off >= k and, with
// a window, q+off < k+window (window <= 0: no window).
func CausalMask(b tensor.Backend, L, off, window int) tensor.Tensor {
	S := off + L
	m := make([]bool, L*S)
	for q := 0; q < L; q++ {
		for k := 0; k < S; k++ {
			m[q*S+k] = q+off >= k && (window <= 0 || q+off < k+window)
		}
	}
	return b.FromBool(m, []int{L, S})
}

func (c *Rotating) trim(b tensor.Backend, trimSize int, v, app tensor.Tensor) tensor.Tensor {
	parts := []tensor.Tensor{v}
	if trimSize > 0 {
		parts = []tensor.Tensor{b.Slice(v, 2, trimSize, v.Shape()[2])}
	}
	if app != nil {
		parts = append(parts, app)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return b.Concat(2, parts...)
}

func (c *Rotating) temporalOrder(b tensor.Backend, v tensor.Tensor) tensor.Tensor {
	n := v.Shape()[2]
	switch {
	case c.idx == n:
		return v
	case c.idx < c.offset:
		return b.Concat(2, b.Slice(v, 2, c.idx, n), b.Slice(v, 2, 0, c.idx))
	default:
		return b.Slice(v, 2, 0, c.idx)
	}
}

func (c *Rotating) Update(b tensor.Backend, k, v tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	oldK, oldV := c.keys, c.values
	var keys, values tensor.Tensor
	if k.Shape()[2] == 1 {
		keys, values = c.updateInPlace(b, k, v)
	} else {
		keys, values = c.updateConcat(b, k, v)
	}
	replace(b, oldK, oldV, c.keys, c.values)
	return keys, values
}

func (c *Rotating) updateConcat(b tensor.Backend, k, v tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	if c.keys == nil {
		c.keys, c.values = k, v
	} else {
		c.keys, c.values = c.temporalOrder(b, c.keys), c.temporalOrder(b, c.values)
		c.idx = c.keys.Shape()[2]
		trimSize := c.idx - c.MaxSize + 1 // keep MaxSize-1 old keys so every query sees a full window
		c.keys = c.trim(b, trimSize, c.keys, k)
		c.values = c.trim(b, trimSize, c.values, v)
	}
	c.offset += k.Shape()[2]
	c.idx = c.keys.Shape()[2]
	return c.keys, c.values
}

func (c *Rotating) updateInPlace(b tensor.Backend, k, v tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	ks, vs := k.Shape(), v.Shape()
	prev := c.offset
	if c.keys == nil || (prev >= c.keys.Shape()[2] && c.keys.Shape()[2] < c.MaxSize) {
		n := min(step, c.MaxSize-prev)
		newK := b.Zeros([]int{ks[0], ks[1], n, ks[3]}, k.DType())
		newV := b.Zeros([]int{vs[0], vs[1], n, vs[3]}, v.DType())
		if c.keys != nil {
			c.keys, c.values = b.Concat(2, c.keys, newK), b.Concat(2, c.values, newV)
		} else {
			c.keys, c.values = newK, newV
		}
		c.idx = prev
	}
	if trimSize := c.keys.Shape()[2] - c.MaxSize; trimSize > 0 {
		c.keys = c.trim(b, trimSize, c.keys, nil)
		c.values = c.trim(b, trimSize, c.values, nil)
		c.idx = c.MaxSize
	}
	if c.idx == c.MaxSize {
		c.idx = 0
	}
	c.keys = b.SliceUpdate(c.keys, k, 2, c.idx)
	c.values = b.SliceUpdate(c.values, v, 2, c.idx)
	c.offset++
	c.idx++
	if c.offset < c.MaxSize {
		return b.Slice(c.keys, 2, 0, c.offset), b.Slice(c.values, 2, 0, c.offset)
	}
	return c.keys, c.values
}

// Trim works only while nothing has been overwritten.
func (c *Rotating) Trim(n int) int {
	if c.offset >= c.MaxSize {
		return 0
	}
	n = min(c.offset, n)
	c.offset -= n
	c.idx -= n
	return n
}

// CanTrim: only while nothing has been overwritten (mlx-lm's is_trimmable).
func (c *Rotating) CanTrim(n int) bool { return c.offset < c.MaxSize && n <= c.offset }

func (c *Rotating) State() []tensor.Tensor {
	if c.keys == nil {
		return nil
	}
	return []tensor.Tensor{c.keys, c.values}
}

func (c *Rotating) Release(b tensor.Backend) {
	if c.keys != nil {
		b.Unpin(c.keys, c.values)
	}
	c.keys, c.values, c.offset, c.idx = nil, nil, 0, 0
}
