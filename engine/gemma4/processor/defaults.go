package processor

import (
	"perch/engine/gemma4"
	"slices"
)

// ImageBudgets are the image soft-token budgets a request may ask for.
func ImageBudgets() []int { return slices.Clone(imageBudgets) }

// DefaultImageTokens is the image budget of a request that names none, for
// the model in dir (0: it cannot see), read without loading the model.
func DefaultImageTokens(dir string) (int, error) {
	cfg, err := gemma4.LoadConfig(dir)
	if err != nil || cfg.Vision == nil {
		return 0, err
	}
	pc, err := loadProcessorConfig(dir)
	if err != nil {
		return 0, err
	}
	if pc.ImageProcessor.MaxSoftTokens > 0 {
		return pc.ImageProcessor.MaxSoftTokens, nil
	}
	return cfg.Vision.DefaultSoftTokens(), nil
}
