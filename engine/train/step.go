package train

import (
	"errors"

	"perch/engine/gemma4"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// Trainer holds an adapter on a backend and its optimizer state, and steps
// it. Engine thread only.
type Trainer struct {
	b     tensor.Backend
	m     *gemma4.Model
	opts  Options
	cfg   lora.Config
	bound *lora.Bound
}

var errNotBuilt = errors.New("train: the training step is not built yet (issue #11 in progress)")

// NewTrainer binds ad to m on b (m's own Text.Adapter is left alone: the
// trainer runs on its own view of the model) and checks opts.
func NewTrainer(b tensor.Backend, m *gemma4.Model, ad *lora.Adapter, opts Options) (*Trainer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bound, err := lora.Bind(b, m.Text, ad)
	if err != nil {
		return nil, err
	}
	return &Trainer{b: b, m: m, opts: opts, cfg: ad.Config, bound: bound}, nil
}

// Step runs one optimizer step on a batch.
func (t *Trainer) Step(rows []Row) (StepMetrics, error) { return StepMetrics{}, errNotBuilt }

// Evaluate computes the loss of a batch without updating.
func (t *Trainer) Evaluate(rows []Row) (StepMetrics, error) { return StepMetrics{}, errNotBuilt }

// Snapshot copies the current leaves to the host.
func (t *Trainer) Snapshot() (*lora.Adapter, error) { return t.bound.Host(t.cfg) }

// Close frees the trainer's tensors.
func (t *Trainer) Close() { t.bound.Free() }
