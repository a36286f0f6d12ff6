package engine

import (
	"context"
	"fmt"
)

// loadTemplate is replaced by the chat-template binding.
func (e *Engine) loadTemplate(dir string) error { return nil }

// promptIDs returns the token ids to prefill.
func (e *Engine) promptIDs(ctx context.Context, req *Request) ([]int32, error) {
	if len(req.PromptIDs) > 0 {
		return append([]int32(nil), req.PromptIDs...), nil
	}
	return nil, fmt.Errorf("chat messages need the chat template (not wired yet)")
}
