package trainset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"perch/engine/chattemplate"
	"perch/engine/train"
)

// isMessagesObject reports a {"messages": [...]} object: mlx-lm-lora's
// preference rows carry each side as a whole conversation.
func isMessagesObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// conversationPair is mlx-lm-lora's {"chosen": {"messages": [...]},
// "rejected": {"messages": [...]}} row: two conversations that share every
// turn but their last, the assistant's answers.
func (e *Encoder) conversationPair(ctx context.Context, rec *record) (train.Row, error) {
	if !has(rec.Chosen) || !has(rec.Rejected) {
		return train.Row{}, errors.New("a preference row needs \"chosen\" and \"rejected\"")
	}
	var sides [2]struct {
		Messages json.RawMessage `json:"messages"`
	}
	for i, raw := range []json.RawMessage{rec.Chosen, rec.Rejected} {
		name := [2]string{"chosen", "rejected"}[i]
		if err := strictUnmarshal(raw, &sides[i]); err != nil || !has(sides[i].Messages) {
			return train.Row{}, fmt.Errorf("%q must be a string, a message list or {\"messages\": [...]}", name)
		}
	}
	c, cmedia, err := parseMessages(sides[0].Messages, "chosen.messages")
	if err != nil {
		return train.Row{}, err
	}
	r, _, err := parseMessages(sides[1].Messages, "rejected.messages")
	if err != nil {
		return train.Row{}, err
	}
	if len(c) < 2 || len(c) != len(r) || !reflect.DeepEqual(c[:len(c)-1], r[:len(r)-1]) {
		return train.Row{}, errors.New("\"chosen\" and \"rejected\" must be the same conversation up to their last message (the two answers)")
	}
	n := len(c)
	if c[n-1].Role != "assistant" || r[n-1].Role != "assistant" {
		return train.Row{}, errors.New("the last message of \"chosen\" and of \"rejected\" must be the assistant's answer")
	}
	if hasMedia(c[n-1]) || hasMedia(r[n-1]) {
		return train.Row{}, errors.New("the answers (the last messages) cannot carry media: attach them to an earlier turn")
	}
	if has(rec.Prompt) {
		return train.Row{}, errors.New("a row of {\"messages\"} sides holds its prompt in them: drop \"prompt\"")
	}
	var row train.Row
	for _, side := range []struct {
		last []chattemplate.Message
		out  *[]int32
		name string
	}{{c[n-1:], &row.Chosen, "chosen"}, {r[n-1:], &row.Rejected, "rejected"}} {
		p, target, err := e.split(ctx, c[:n-1], side.last, rec)
		if err != nil {
			return train.Row{}, fmt.Errorf("%s: %v", side.name, err)
		}
		row.Prompt, *side.out = p, target
	}
	if len(cmedia) > 0 {
		if row.Prompt, err = e.withMedia(ctx, c[:n-1], cmedia, rec, &row); err != nil {
			return train.Row{}, err
		}
	}
	return row, nil
}

// unpaired is TRL's KTO row {"prompt", "completion", "label": true|false}:
// one answer and whether it is desirable (prompt and completion strings or
// message lists).
func (e *Encoder) unpaired(ctx context.Context, rec *record) (train.Row, error) {
	if !has(rec.Prompt) || !has(rec.Completion) || !has(rec.Label) {
		return train.Row{}, fmt.Errorf("%s needs unpaired rows: {\"prompt\", \"completion\", \"label\": true|false}", e.Method)
	}
	var label bool
	if err := json.Unmarshal(rec.Label, &label); err != nil {
		return train.Row{}, errors.New("\"label\" must be true (a desirable completion) or false")
	}
	prompt, media, err := e.turns(rec, rec.Prompt, "prompt", "user")
	if err != nil {
		return train.Row{}, err
	}
	answer, err := e.answer(rec, rec.Completion, "completion")
	if err != nil {
		return train.Row{}, err
	}
	return e.unpairedRow(ctx, prompt, media, answer, label, rec)
}

// unpairedRow is an unpaired row of prompt, its answer and the answer's label.
func (e *Encoder) unpairedRow(ctx context.Context, prompt []chattemplate.Message, media []MediaRef, answer []chattemplate.Message, label bool, rec *record) (train.Row, error) {
	p, target, err := e.split(ctx, prompt, answer, rec)
	if err != nil {
		return train.Row{}, err
	}
	row := train.Row{Prompt: p, Chosen: target, Label: label}
	if len(media) > 0 {
		if row.Prompt, err = e.withMedia(ctx, prompt, media, rec, &row); err != nil {
			return train.Row{}, err
		}
	}
	return row, nil
}
