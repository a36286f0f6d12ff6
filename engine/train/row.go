// Package train fine-tunes LoRA adapters of a Gemma-4 model on tokenized
// rows (Row): batches, the step (each loss an Objective: SFT, DPO, ORPO,
// SimPO, CPO, KTO; AdamW with LoRA+), and runs with validation,
// checkpoints, resume and metrics.
//
// Data flows one way: rows come in (made from JSONL folders or an app's
// examples by engine/trainset, or given as they are), steps turn them into
// adapter weights, and events, metrics and checkpoints go out. It reads no
// dataset file and knows no chat template; a row's media are prepared
// again through the MediaSource its maker set.
package train

import "perch/engine/gemma4/processor"

// Method names a training objective (objective.go): sft, dpo, orpo, ….
type Method string

// Row is one tokenized example.
type Row struct {
	// SFT: IDs is the whole sequence; the loss counts targets t with
	// PromptLen <= t < len(IDs). PromptLen is at least 1 (position 0 has
	// no prediction).
	IDs       []int32
	PromptLen int
	// Pairs (DPO, ORPO, …): the prompt and the two responses (responses
	// WITHOUT the prompt). Unpaired rows (KTO): the prompt, the completion
	// in Chosen, and Label: whether the completion is desirable.
	Prompt, Chosen, Rejected []int32
	Label                    bool
	// Media are the prompt's attachments, each with the positions of its
	// soft tokens (in IDs, or in Prompt); the towers run frozen and their
	// outputs are spliced as at inference (Features, Inputs). Blocks gives
	// the prompt's positions their image/video block or -1 (nil without
	// visual media). A dataset row holds them only while it trains
	// (WithMedia); the run prepares them before each step.
	Media  []processor.Placed
	Blocks []int
	// Source names the row in messages: "train.jsonl:12".
	Source string

	source MediaSource // how a dataset row prepares its media again (SetMediaSource)
}

// Tokens is the number of positions the row feeds (both sequences of a pair).
func (r *Row) Tokens() int {
	if r.IDs != nil {
		return len(r.IDs)
	}
	if r.Rejected == nil {
		return len(r.Prompt) + len(r.Chosen)
	}
	return 2*len(r.Prompt) + len(r.Chosen) + len(r.Rejected)
}
