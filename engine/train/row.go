// Package train fine-tunes LoRA adapters of a Gemma-4 model: datasets
// (JSONL folders, rendered with the model's own chat template), batches,
// the step (SFT, DPO, ORPO losses; AdamW with LoRA+), and runs with
// validation, checkpoints and metrics.
package train

import (
	"fmt"

	"perch/engine/gemma4"
)

// Method is the training objective.
type Method string

const (
	SFT  Method = "sft"  // cross-entropy over the response tokens
	DPO  Method = "dpo"  // direct preference optimisation (sigmoid), reference = adapter off
	ORPO Method = "orpo" // odds-ratio preference optimisation
)

// ParseMethod checks a method name.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case SFT, DPO, ORPO:
		return m, nil
	}
	return "", fmt.Errorf("unknown training method %q: use sft, dpo or orpo", s)
}

// Preference reports whether m trains on chosen/rejected pairs.
func (m Method) Preference() bool { return m == DPO || m == ORPO }

// Row is one tokenized example.
type Row struct {
	// SFT: IDs is the whole sequence; the loss counts targets t with
	// PromptLen <= t < len(IDs). PromptLen is at least 1 (position 0 has
	// no prediction).
	IDs       []int32
	PromptLen int
	// DPO/ORPO: the prompt and the two responses (responses WITHOUT the prompt).
	Prompt, Chosen, Rejected []int32
	// Media are the prompt's attachments, each with the positions of its
	// soft tokens (in IDs, or in Prompt); the towers run frozen and their
	// outputs are spliced as at inference (Features, Inputs). Blocks gives
	// the prompt's positions their image/video block or -1 (nil without
	// visual media). A dataset row holds them only while it trains
	// (WithMedia); the run prepares them before each step.
	Media  []gemma4.Placed
	Blocks []int
	// Source names the row in messages: "train.jsonl:12".
	Source string

	source *mediaSource // how a dataset row prepares its media again
}

// Tokens is the number of positions the row feeds (both sequences of a pair).
func (r *Row) Tokens() int {
	if r.IDs != nil {
		return len(r.IDs)
	}
	return 2*len(r.Prompt) + len(r.Chosen) + len(r.Rejected)
}
