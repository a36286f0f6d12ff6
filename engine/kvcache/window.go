package kvcache

import (
	"perch/engine/tensor"
)

// Window is the sliding-window cache: a ring of Cap >= Window slots, slot
// p % Cap holding position p, with every slot's position known so masks
// are exact. The slack beyond the window lets a follow-up turn cut back up
// to Cap-Window+1 tokens (mlx-lm's RotatingKVCache of exactly the window
// size cannot be trimmed once it wraps) and costs Cap-Window extra slots.
//   - L = 1: the new key is written, then the query sees exactly its window
//     (a slice of the ring, two when it wraps), so no mask is needed.
//   - L > 1: the queries see the ring's old keys plus all L new ones
//     (concatenated, so a chunk longer than the ring still sees its whole
//     window); then the last min(L, Cap) new keys are written.
//
// Attention results equal mlx-lm's up to the order of the summed keys.
type Window struct {
	Window, Cap  int
	keys, values tensor.Tensor // [B, H, Cap, D]
	pos          []int         // position held by each slot, -1 empty
	offset       int
}

// NewWindow makes a sliding cache for window w with slack extra slots.
func NewWindow(w, slack int) *Window {
	c := &Window{Window: w, Cap: w + max(slack, 0), pos: make([]int, w+max(slack, 0))}
	for i := range c.pos {
		c.pos[i] = -1
	}
	return c
}

func (c *Window) Offset() int { return c.offset }

func (c *Window) Mask(b tensor.Backend, L int, blocks []int) tensor.Mask {
	if L == 1 {
		return tensor.Mask{} // Update hands back exactly the window
	}
	keys := make([]int, 0, c.Cap+L)
	if c.keys != nil {
		keys = append(keys, c.pos...)
	}
	for i := 0; i < L; i++ {
		keys = append(keys, c.offset+i)
	}
	return tensor.Mask{Kind: tensor.MaskArray, Array: maskOf(b, c.offset, L, keys, c.Window, blocks)}
}

func (c *Window) Update(b tensor.Backend, k, v tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	ks, vs := k.Shape(), v.Shape()
	L := ks[2]
	oldK, oldV := c.keys, c.values
	if c.keys == nil {
		c.keys = b.Zeros([]int{ks[0], ks[1], c.Cap, ks[3]}, k.DType())
		c.values = b.Zeros([]int{vs[0], vs[1], c.Cap, vs[3]}, v.DType())
	}
	var attK, attV tensor.Tensor
	if L > 1 {
		if oldK == nil {
			attK, attV = k, v // nothing cached yet
		} else {
			attK, attV = b.Concat(2, oldK, k), b.Concat(2, oldV, v)
		}
	}
	// Write the last min(L, Cap) new positions into their slots.
	from := max(0, L-c.Cap)
	for i := from; i < L; {
		p := c.offset + i
		slot := p % c.Cap
		n := min(L-i, c.Cap-slot)
		c.keys = b.SliceUpdate(c.keys, b.Slice(k, 2, i, i+n), 2, slot)
		c.values = b.SliceUpdate(c.values, b.Slice(v, 2, i, i+n), 2, slot)
		for j := 0; j < n; j++ {
			c.pos[slot+j] = p + j
		}
		i += n
	}
	c.offset += L
	replace(b, oldK, oldV, c.keys, c.values)
	if L > 1 {
		return attK, attV
	}
	return c.window(b, c.keys), c.window(b, c.values)
}

// window is the last min(offset, Window) positions of a ring buffer, oldest first.
func (c *Window) window(b tensor.Backend, ring tensor.Tensor) tensor.Tensor {
	n := min(c.offset, c.Window)
	start := (c.offset - n) % c.Cap
	if start+n <= c.Cap {
		if start == 0 && n == c.Cap {
			return ring
		}
		return b.Slice(ring, 2, start, start+n)
	}
	return b.Concat(2, b.Slice(ring, 2, start, c.Cap), b.Slice(ring, 2, 0, start+n-c.Cap))
}

// CanTrim: the next query still has its whole window after dropping n.
func (c *Window) CanTrim(n int) bool {
	if n > c.offset {
		return false
	}
	next := c.offset - n
	need := max(0, next-c.Window+1) // the oldest position the next query sees
	if need >= next {
		return true
	}
	oldest := -1 // the slots hold consecutive positions; find the first
	for _, p := range c.pos {
		if p >= 0 && (oldest < 0 || p < oldest) {
			oldest = p
		}
	}
	return oldest >= 0 && oldest <= need
}

func (c *Window) Trim(n int) int {
	if !c.CanTrim(n) {
		return 0
	}
	c.offset -= n
	for i, p := range c.pos {
		if p >= c.offset {
			c.pos[i] = -1
		}
	}
	return n
}

func (c *Window) State() []tensor.Tensor {
	if c.keys == nil {
		return nil
	}
	return []tensor.Tensor{c.keys, c.values}
}

func (c *Window) Release(b tensor.Backend) {
	if c.keys != nil {
		b.Unpin(c.keys, c.values)
	}
	c.keys, c.values, c.offset = nil, nil, 0
	for i := range c.pos {
		c.pos[i] = -1
	}
}
