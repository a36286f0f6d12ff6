package lora

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// Leaf is one host-side float32 matrix.
type Leaf struct {
	Shape []int
	Data  []float32
}

// Adapter is a LoRA adapter on the host: leaves keyed by mlx-lm's names,
// "<base weight key without .weight>.lora_a" ([In, r]) and ".lora_b"
// ([r, Out]).
type Adapter struct {
	Config Config
	Leaves map[string]Leaf
}

// Target is one projection an adapter adapts.
type Target struct {
	Key    string // the base weight's key without ".weight"
	Layer  int
	Module string
	Linear *tensor.Linear
}

// A and B are the target's leaf names.
func (t Target) A() string { return t.Key + ".lora_a" }
func (t Target) B() string { return t.Key + ".lora_b" }

// Targets lists the projections of m that cfg adapts, by layer and then in
// gemma4.ProjectionModules order. Relative keys ("self_attn.q_proj") apply
// to the last NumLayers layers (all when NumLayers <= 0) wherever the module
// exists: KV-shared layers have no k/v, K-eq-V layers no v. Keys with a
// layer ("language_model.model.layers.3.mlp.up_proj", as mlx-vlm writes
// them) name one projection.
func Targets(m *gemma4.Text, cfg Config) ([]Target, error) {
	keys := cfg.LoRA.Keys
	if len(keys) == 0 {
		keys = DefaultKeys
	}
	NL := len(m.Layers)
	first := 0
	if cfg.NumLayers > 0 && cfg.NumLayers < NL {
		first = NL - cfg.NumLayers
	}
	want := map[[2]string]bool{} // {layer or "*", module}
	for _, k := range keys {
		layer, module, err := parseKey(k)
		if err != nil {
			return nil, err
		}
		if layer >= NL {
			return nil, fmt.Errorf("%s: key %q names layer %d but the model has %d layers", ConfigFile, k, layer, NL)
		}
		l := "*"
		if layer >= 0 {
			l = fmt.Sprint(layer)
		}
		want[[2]string{l, module}] = true
	}
	var out []Target
	for _, p := range m.Projections() {
		rel := p.Layer >= first && want[[2]string{"*", p.Module}]
		if rel || want[[2]string{fmt.Sprint(p.Layer), p.Module}] {
			out = append(out, Target{Key: m.ModuleKey(p.Layer, p.Module), Layer: p.Layer, Module: p.Module, Linear: p.Linear})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the adapter's keys (%s) match no projection of this model", strings.Join(keys, ", "))
	}
	return out, nil
}

// New makes an adapter for m with mlx-lm's initialisation: lora_a uniform
// in ±1/sqrt(In), lora_b zero (so the adapter starts as the identity),
// drawn from seed.
func New(cfg Config, m *gemma4.Model, seed uint64) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ts, err := Targets(m.Text, cfg)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x10AA))
	a := &Adapter{Config: cfg, Leaves: map[string]Leaf{}}
	r := cfg.LoRA.Rank
	for _, t := range ts {
		in, out := t.Linear.In, t.Linear.Out
		bound := 1 / math.Sqrt(float64(in))
		av := make([]float32, in*r)
		for i := range av {
			av[i] = float32((2*rng.Float64() - 1) * bound)
		}
		a.Leaves[t.A()] = Leaf{Shape: []int{in, r}, Data: av}
		a.Leaves[t.B()] = Leaf{Shape: []int{r, out}, Data: make([]float32, r*out)}
	}
	return a, nil
}

// Names lists the leaf names, sorted.
func (a *Adapter) Names() []string {
	out := make([]string, 0, len(a.Leaves))
	for n := range a.Leaves {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Params is the number of adapter parameters.
func (a *Adapter) Params() int {
	n := 0
	for _, l := range a.Leaves {
		n += len(l.Data)
	}
	return n
}

// leafKey maps a leaf name to {layer, module, "a" or "b"} whatever text
// prefix it was written with.
func leafKey(name string) (key [3]string, ok bool) {
	var ab string
	switch {
	case strings.HasSuffix(name, ".lora_a"):
		ab = "a"
	case strings.HasSuffix(name, ".lora_b"):
		ab = "b"
	default:
		return key, false
	}
	m := keyRe.FindStringSubmatch(strings.TrimSuffix(strings.TrimSuffix(name, ".lora_a"), ".lora_b"))
	if m == nil {
		return key, false
	}
	return [3]string{m[1], m[2], ab}, true
}

// Match pairs the adapter's leaves with m's targets: every target must have
// both leaves with the shapes its projection needs ([In, r], [r, Out]),
// and every leaf must belong to a target. Leaves written under another
// text prefix (mlx-vlm's "model.language_model.") match by layer and
// module. It returns, per target, its A and B leaves.
func (a *Adapter) Match(m *gemma4.Text) ([]Target, [][2]Leaf, error) {
	ts, err := Targets(m, a.Config)
	if err != nil {
		return nil, nil, err
	}
	byKey := map[[3]string]string{}
	for name := range a.Leaves {
		k, ok := leafKey(name)
		if !ok {
			return nil, nil, fmt.Errorf("%s: tensor %q is not a LoRA leaf (<module>.lora_a or .lora_b)", WeightsFile, name)
		}
		if prev, dup := byKey[k]; dup {
			return nil, nil, fmt.Errorf("%s: tensors %q and %q are the same leaf", WeightsFile, prev, name)
		}
		byKey[k] = name
	}
	r := a.Config.LoRA.Rank
	leaves := make([][2]Leaf, len(ts))
	used := 0
	for i, t := range ts {
		for j, ab := range []string{"a", "b"} {
			name, ok := byKey[[3]string{fmt.Sprint(t.Layer), t.Module, ab}]
			if !ok {
				return nil, nil, fmt.Errorf("%s has no %s for %s (the config adapts it)", WeightsFile, "lora_"+ab, t.Key)
			}
			l := a.Leaves[name]
			want := []int{t.Linear.In, r}
			if ab == "b" {
				want = []int{r, t.Linear.Out}
			}
			if len(l.Shape) != 2 || l.Shape[0] != want[0] || l.Shape[1] != want[1] || len(l.Data) != want[0]*want[1] {
				return nil, nil, fmt.Errorf("%s: %s has shape %v, the model needs %v (rank %d)", WeightsFile, name, l.Shape, want, r)
			}
			leaves[i][j] = l
			used++
		}
	}
	if used != len(a.Leaves) {
		for _, n := range a.Names() {
			k, _ := leafKey(n)
			found := false
			for _, t := range ts {
				if k[0] == fmt.Sprint(t.Layer) && k[1] == t.Module {
					found = true
				}
			}
			if !found {
				return nil, nil, fmt.Errorf("%s: %s adapts a projection this model or the config's keys do not have", WeightsFile, n)
			}
		}
	}
	return ts, leaves, nil
}
