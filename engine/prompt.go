package engine

import (
	"context"
	"errors"
	"fmt"

	"perch/engine/chattemplate"
)

// loadTemplate reads the model's own chat template.
func (e *Engine) loadTemplate(dir string) error {
	t, err := chattemplate.Load(dir)
	if err != nil {
		return fmt.Errorf("chat template: %w", err)
	}
	e.tmpl = t
	return nil
}

// promptIDs returns the token ids to prefill, media placeholders expanded.
func (e *Engine) promptIDs(ctx context.Context, req *Request, items []*mediaItem) ([]int32, error) {
	if len(req.PromptIDs) > 0 {
		return e.expandIDs(req.PromptIDs, items)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("the request has no messages")
	}
	text, err := e.tmpl.Render(ctx, templateInput(req))
	if err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	if text, err = e.placeholderText().expandText(text, items); err != nil {
		return nil, err
	}
	return e.tok.Encode(text, false), nil // the template writes <bos> itself
}

// templateInput maps the request onto the template's OpenAI-shaped messages.
func templateInput(req *Request) chattemplate.Input {
	in := chattemplate.Input{AddGenerationPrompt: true}
	if req.EnableThinking {
		in.EnableThinking = chattemplate.Bool(true)
	}
	for _, m := range req.Messages {
		tm := chattemplate.Message{Role: string(m.Role), Reasoning: m.Thinking}
		if len(m.Content) == 1 && m.Content[0].Type == PartText {
			tm.Content = m.Content[0].Text
		} else {
			tm.Parts = []chattemplate.Part{}
			for _, p := range m.Content {
				tm.Parts = append(tm.Parts, chattemplate.Part{Type: string(p.Type), Text: p.Text})
			}
		}
		in.Messages = append(in.Messages, tm)
	}
	return in
}
