package gemma4

import (
	"fmt"

	"perch/engine/checkpoint"
	"perch/engine/tensor"
)

// Model is a loaded checkpoint: its config, the language model and the
// towers its config names.
type Model struct {
	Cfg       *Config
	Text      *Text
	Vision    Vision        // nil without vision_config
	VisionCfg *VisionConfig // nil without vision_config
	Audio     *AudioTower   // nil without audio_config
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
	if m.Vision, m.VisionCfg, err = LoadVision(b, ck, cfg); err != nil {
		ck.Close()
		return nil, fmt.Errorf("load %s: vision: %w", dir, err)
	}
	if m.Audio, err = LoadAudio(b, ck, cfg); err != nil {
		ck.Close()
		return nil, fmt.Errorf("load %s: audio: %w", dir, err)
	}
	m.Unknown = ck.Unused()
	return m, nil
}

// Close releases the mapped checkpoint; the backend must not use the
// model's tensors afterwards.
func (m *Model) Close() error { return m.ck.Close() }

// Checkpoint is the open checkpoint the model reads from.
func (m *Model) Checkpoint() *checkpoint.Checkpoint { return m.ck }
