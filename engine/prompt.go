package engine

import (
	"context"
	"fmt"
)

// loadTemplate is replaced by the chat-template binding.
func (e *Engine) loadTemplate(dir string) error { return nil }

// promptIDs returns the token ids to prefill, media placeholders expanded.
func (e *Engine) promptIDs(ctx context.Context, req *Request, items []*mediaItem) ([]int32, error) {
	if len(req.PromptIDs) > 0 {
		return e.expandIDs(req.PromptIDs, items)
	}
	return nil, fmt.Errorf("chat messages need the chat template (not wired yet)")
}
