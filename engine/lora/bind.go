package lora

import (
	"errors"

	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// Bound is an adapter's leaves on a backend (float32, pinned), bound to a
// model's projections. Engine thread only.
type Bound struct {
	Targets []Target
	LoRAs   []*gemma4.LoRA // per target; the trainer swaps A and B as it steps
	Adapter gemma4.Adapter // what Text.Adapter takes
	Scale   float64
	b       tensor.Backend
	on      *gemma4.Text // where Attach put it
}

// Bind uploads a's leaves to b and binds them to m's projections (checked
// with Match); it does not attach them.
func Bind(b tensor.Backend, m *gemma4.Text, a *Adapter) (*Bound, error) {
	ts, leaves, err := a.Match(m)
	if err != nil {
		return nil, err
	}
	x := &Bound{Targets: ts, Adapter: gemma4.Adapter{}, Scale: a.Config.LoRA.Scale, b: b}
	for i, t := range ts {
		lo := &gemma4.LoRA{
			A:     b.FromFloat32(leaves[i][0].Data, leaves[i][0].Shape, tensor.Float32),
			B:     b.FromFloat32(leaves[i][1].Data, leaves[i][1].Shape, tensor.Float32),
			Scale: a.Config.LoRA.Scale,
		}
		b.Pin(lo.A, lo.B)
		x.LoRAs = append(x.LoRAs, lo)
		x.Adapter[t.Linear] = lo
	}
	if err := b.Eval(x.leaves()...); err != nil {
		x.Free()
		return nil, err
	}
	return x, nil
}

// Attach binds a to m's projections on b and switches it on (m.Text.Adapter).
func Attach(b tensor.Backend, m *gemma4.Model, a *Adapter) (*Bound, error) {
	x, err := Bind(b, m.Text, a)
	if err != nil {
		return nil, err
	}
	x.on, m.Text.Adapter = m.Text, x.Adapter
	return x, nil
}

// Detach switches the adapter off where Attach put it (unless another
// adapter replaced it there since) and frees its leaves.
func (x *Bound) Detach() {
	if x.on != nil && sameAdapter(x.on.Adapter, x.Adapter) {
		x.on.Adapter = nil
	}
	x.on = nil
	x.Free()
}

// Free releases the leaves on the backend.
func (x *Bound) Free() {
	if x.b != nil {
		x.b.Unpin(x.leaves()...)
		x.b = nil
	}
}

func (x *Bound) leaves() []tensor.Tensor {
	var ts []tensor.Tensor
	for _, lo := range x.LoRAs {
		ts = append(ts, lo.A, lo.B)
	}
	return ts
}

// Host reads the current leaves back into an Adapter with cfg.
func (x *Bound) Host(cfg Config) (*Adapter, error) {
	if x.b == nil {
		return nil, errors.New("lora: the adapter's leaves were freed")
	}
	a := &Adapter{Config: cfg, Leaves: map[string]Leaf{}}
	for i, t := range x.Targets {
		for j, tt := range []tensor.Tensor{x.LoRAs[i].A, x.LoRAs[i].B} {
			v, err := x.b.Float32s(tt)
			if err != nil {
				return nil, err
			}
			name := t.A()
			if j == 1 {
				name = t.B()
			}
			a.Leaves[name] = Leaf{Shape: append([]int(nil), tt.Shape()...), Data: v}
		}
	}
	return a, nil
}

func sameAdapter(a, b gemma4.Adapter) bool {
	if len(a) != len(b) || a == nil || b == nil {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
