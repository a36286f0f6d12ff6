package gemma4

import (
	"fmt"

	"perch/engine/checkpoint"
	"perch/engine/tensor"
)

// Model is a loaded checkpoint: its config and the language model (the
// towers join it with multimodal support).
type Model struct {
	Cfg  *Config
	Text *Text
	// Unknown lists checkpoint tensors the model did not use.
	Unknown []string
	ck      *checkpoint.Checkpoint
}

// Load reads config.json and binds every tensor the config needs.
func Load(b tensor.Backend, dir string) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	ck, err := checkpoint.Open(dir)
	if err != nil {
		return nil, err
	}
	text, err := LoadText(b, ck, cfg)
	if err != nil {
		ck.Close()
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	m := &Model{Cfg: cfg, Text: text, ck: ck}
	m.Unknown = ck.Unused()
	return m, nil
}

// Close releases the mapped checkpoint; the backend must not use the
// model's tensors afterwards.
func (m *Model) Close() error { return m.ck.Close() }

// Checkpoint is the open checkpoint the model reads from.
func (m *Model) Checkpoint() *checkpoint.Checkpoint { return m.ck }
