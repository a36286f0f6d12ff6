package chat

import (
	"perch/engine"
	"perch/ui"
)

// The settings the user left unset send nothing: the engine applies the
// model's own defaults, which the settings page shows (modelDefaults).

// modelDefaults reads what the model in dir does with unset settings
// (nil when its folder cannot say).
func modelDefaults(dir string) *ui.ModelDefaults {
	d, err := engine.ReadDefaults(dir)
	if err != nil {
		return nil
	}
	return &ui.ModelDefaults{Sampling: d.Sampling, Greedy: d.Greedy,
		ImageTokens: d.ImageTokens, VideoFPS: d.VideoFPS, MaxFrames: d.MaxFrames, MaxTokens: d.MaxTokens}
}

// orZero is a setting's value, or 0 (the engine's "use the model's") when unset.
func orZero[T int | float64](v *T) T {
	if v == nil {
		return 0
	}
	return *v
}
