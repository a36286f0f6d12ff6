package kvcache

import (
	"perch/engine/tensor"
)

// Fixed-shape decode steps. A compiled decode step (the engine, on MLX) is
// recorded once and replayed, so every step must see the same shapes: it
// attends over a cache's whole buffers under a mask of the slots the new
// token sees, and writes the new key and value at a slot given as a
// tensor. The buffers stay the caches' own (one per cache, no copies kept):
// a Full cache keeps its capacity (grown by a block, outside the step, when
// full; each new capacity is a new shape and so a new recording), a Window
// cache its ring.
//
// Attention then sums the same keys as the sliced path, plus masked slots
// that weigh exactly zero, in slot order rather than oldest first: the
// results equal Update's up to the order of the sums.

// Stepper is a cache that can take a decode token at fixed shapes: State
// holds the buffers the step reads and replaces.
type Stepper interface {
	Cache
	// StepReserve makes room for one more token (a full Full cache grows
	// by a block); false when the cache holds no buffers yet.
	StepReserve(b tensor.Backend) bool
	// StepKind tells which caches agree on slot and mask: those of equal
	// kinds, so a step shares one slot and one mask between them.
	StepKind() [3]int
	// StepSlot is where the new token's key and value go, and which slots
	// it sees once written (in visible, reused when long enough; len S).
	StepSlot(visible []bool) (slot int, vis []bool)
	// StepCommit takes the buffers the step returned (the token written at
	// the slot) and counts the token.
	StepCommit(b tensor.Backend, keys, values tensor.Tensor)
}

func visibleOf(buf []bool, n int) []bool {
	if cap(buf) < n {
		buf = make([]bool, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// StepReserve grows a full buffer by a block, as Update would.
func (c *Full) StepReserve(b tensor.Backend) bool {
	if c.keys == nil {
		return false
	}
	if c.offset+1 > c.keys.Shape()[2] {
		ks, vs := c.keys.Shape(), c.values.Shape()
		keys, values := c.keys, c.values
		if c.offset%step != 0 {
			keys, values = b.Slice(keys, 2, 0, c.offset), b.Slice(values, 2, 0, c.offset)
		}
		keys = b.Concat(2, keys, b.Zeros([]int{ks[0], ks[1], step, ks[3]}, c.keys.DType()))
		values = b.Concat(2, values, b.Zeros([]int{vs[0], vs[1], step, vs[3]}, c.values.DType()))
		replace(b, c.keys, c.values, keys, values)
		c.keys, c.values = keys, values
	}
	return true
}

// StepKind: Full caches of one capacity holding the same tokens.
func (c *Full) StepKind() [3]int {
	S := 0
	if c.keys != nil {
		S = c.keys.Shape()[2]
	}
	return [3]int{0, S, c.offset}
}

// StepSlot: the new token goes to slot offset and sees slots 0..offset.
func (c *Full) StepSlot(visible []bool) (int, []bool) {
	visible = visibleOf(visible, c.keys.Shape()[2])
	for i := 0; i <= c.offset; i++ {
		visible[i] = true
	}
	return c.offset, visible
}

func (c *Full) StepCommit(b tensor.Backend, keys, values tensor.Tensor) {
	replace(b, c.keys, c.values, keys, values)
	c.keys, c.values = keys, values
	c.offset++
}

// StepReserve: a ring always has room.
func (c *Window) StepReserve(b tensor.Backend) bool { return c.keys != nil }

// StepKind: Window caches of one geometry holding the same tokens.
func (c *Window) StepKind() [3]int { return [3]int{1 + c.Window, c.Cap, c.offset} }

// StepSlot: the new token goes to its ring slot and sees the slots of the
// last Window positions, itself included (what Update's window holds).
func (c *Window) StepSlot(visible []bool) (int, []bool) {
	q := c.offset
	slot := q % c.Cap
	visible = visibleOf(visible, c.Cap)
	for i, p := range c.pos {
		if i == slot {
			p = q
		}
		visible[i] = p >= 0 && q-p < c.Window
	}
	return slot, visible
}

func (c *Window) StepCommit(b tensor.Backend, keys, values tensor.Tensor) {
	replace(b, c.keys, c.values, keys, values)
	c.keys, c.values = keys, values
	c.pos[c.offset%c.Cap] = c.offset
	c.offset++
}

// StepView is the cache a traced fixed-shape decode step's forward pass
// sees in place of a Stepper: Update writes the new key and value at Slot
// (a tensor) with the backend's SliceUpdateDynamic and returns the whole
// buffers, and Mask is Visible.
type StepView struct {
	Keys, Values tensor.Tensor // the buffers (the step's inputs)
	Slot         tensor.Tensor // int32 [1]
	Visible      tensor.Tensor // bool [1, S]
	Pos          int           // what Offset reports (the traced step's position)
	// NewKeys and NewValues are what Update wrote (the step's results).
	NewKeys, NewValues tensor.Tensor
}

func (v *StepView) Mask(b tensor.Backend, L int, blocks []int) tensor.Mask {
	return tensor.Mask{Kind: tensor.MaskArray, Array: v.Visible}
}

func (v *StepView) Update(b tensor.Backend, k, val tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
	d, ok := b.(tensor.Dynamic)
	if !ok {
		panic("kvcache: a step view needs a tensor.Dynamic backend")
	}
	v.NewKeys = d.SliceUpdateDynamic(v.Keys, k, v.Slot, 2)
	v.NewValues = d.SliceUpdateDynamic(v.Values, val, v.Slot, 2)
	return v.NewKeys, v.NewValues
}

func (v *StepView) Offset() int            { return v.Pos }
func (v *StepView) Trim(n int) int         { return 0 }
func (v *StepView) CanTrim(n int) bool     { return n == 0 }
func (v *StepView) State() []tensor.Tensor { return nil }
func (v *StepView) Release(tensor.Backend) {}
