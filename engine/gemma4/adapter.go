package gemma4

import (
	"fmt"

	"perch/engine/tensor"
)

// LoRA is a low-rank adapter on one projection, in mlx-lm's convention:
// y = x·Wᵀ + Scale·((x⊙Dropout)·A)·B, A [In, r], B [r, Out], the update cast
// to the activation dtype before the add (mlx-lm's LoRALinear).
type LoRA struct {
	A, B  tensor.Tensor
	Scale float64
	// Dropout, when set, multiplies x first (0 or 1/(1-p), shaped like x);
	// the trainer sets it for one forward and clears it afterwards.
	Dropout tensor.Tensor
}

// Adapter binds LoRAs to a model's projections. Text.Adapter nil (or a
// projection missing from the map) runs the frozen base.
type Adapter map[*tensor.Linear]*LoRA

// Projection is one projection of a text layer that an adapter may target.
type Projection struct {
	Layer  int
	Module string // module path inside the layer: "self_attn.q_proj"
	Linear *tensor.Linear
}

// ProjectionModules are the module paths Projections knows, in mlx-lm's
// target order.
var ProjectionModules = []string{
	"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
	"per_layer_input_gate", "per_layer_projection",
}

// Projections lists, layer by layer in ProjectionModules order, every
// projection module of the text layers that exists (KV-shared layers have
// no k/v; K-eq-V layers no v; layers without per-layer inputs no gate).
func (m *Text) Projections() []Projection {
	var out []Projection
	for i, l := range m.Layers {
		for _, mod := range ProjectionModules {
			if lin := l.projection(mod); lin != nil {
				out = append(out, Projection{Layer: i, Module: mod, Linear: lin})
			}
		}
	}
	return out
}

func (l *DecoderLayer) projection(module string) *tensor.Linear {
	switch module {
	case "self_attn.q_proj":
		return l.SelfAttn.QProj
	case "self_attn.k_proj":
		return l.SelfAttn.KProj
	case "self_attn.v_proj":
		return l.SelfAttn.VProj
	case "self_attn.o_proj":
		return l.SelfAttn.OProj
	case "mlp.gate_proj":
		return l.MLP.GateProj
	case "mlp.up_proj":
		return l.MLP.UpProj
	case "mlp.down_proj":
		return l.MLP.DownProj
	case "per_layer_input_gate":
		return l.PerLayerInputGate
	case "per_layer_projection":
		return l.PerLayerProjection
	}
	return nil
}

// ModuleKey is the checkpoint key of layer i's module (without ".weight"):
// "language_model.model.layers.3.self_attn.q_proj".
func (m *Text) ModuleKey(i int, module string) string {
	return fmt.Sprintf("%slayers.%d.%s", m.Prefix, i, module)
}

// WithBackend returns a shallow copy of m whose ops run on b (the weights
// stay those of m's backend: b must accept them, as a wrapper such as the
// autodiff tape does) and whose Adapter is ad.
func (m *Text) WithBackend(b tensor.Backend, ad Adapter) *Text {
	c := *m
	c.b, c.Adapter = b, ad
	return &c
}

// linear applies a projection and, when one is bound, its adapter.
func (m *Text) linear(x tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	y := m.b.Linear(x, l)
	lo := m.Adapter[l]
	if lo == nil {
		return y
	}
	b := m.b
	if lo.Dropout != nil {
		x = b.Mul(x, lo.Dropout)
	}
	// scale·((x·A)·B), the scale applied to the thin x·A (the same product).
	xa := b.MatMul(x, lo.A)
	z := b.MatMul(b.Mul(xa, b.Scalar(lo.Scale, xa.DType())), lo.B)
	if z.DType() != y.DType() {
		z = b.AsType(z, y.DType())
	}
	return b.Add(y, z)
}

// mlp is the dense gated MLP through m.linear (so adapters apply).
func (m *Text) mlp(p *MLP, x tensor.Tensor) tensor.Tensor {
	return m.linear(tensor.GeluMul(m.b, m.linear(x, p.GateProj), m.linear(x, p.UpProj)), p.DownProj)
}

// TextPrefix is where a checkpoint holding the names has keeps the
// language model ("language_model.model." for mlx-community's layout).
func TextPrefix(has func(name string) bool) string { return pick(has, textPrefixes, probeText) }
