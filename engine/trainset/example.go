package trainset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"perch/engine/chattemplate"
	"perch/engine/prompt"
	"perch/engine/train"
)

// Example is one training row as an app holds it, before any token: the
// conversation before the answer and the answer (or two). It reaches the
// encoder as it is, with no dataset file on the way; Line instead carries
// a dataset line as a user wrote it.
type Example struct {
	Source string // names the row in messages ("your correction 3", "train.jsonl:3")
	// Prompt is the conversation before the answer. Media parts name their
	// bytes in Name (read with Encoder.ReadMedia) and may carry Hash.
	Prompt   []prompt.Message
	Chosen   string // the answer to learn (SFT), the better one (pairs), the completion (unpaired)
	Rejected string // the worse answer of a pair
	// Desirable says, for an unpaired row (KTO), whether Chosen is an
	// answer to want.
	Desirable bool
	// Line, when set, is a JSONL dataset line, encoded as a folder's line
	// is; the fields above are then unused.
	Line []byte
}

// EncodeExample turns one example into a row for the encoder's method, as
// Encode does a line: cut to MaxLen with a note, or ok false when nothing
// is left to learn.
func (e *Encoder) EncodeExample(ctx context.Context, ex Example) (row train.Row, note string, ok bool, err error) {
	if ex.Line != nil {
		return e.Encode(ctx, ex.Line)
	}
	msgs, media, err := templateMessages(ex.Prompt)
	if err != nil {
		return row, "", false, err
	}
	answer := func(s string) []chattemplate.Message { return []chattemplate.Message{{Role: "assistant", Content: s}} }
	rec := &record{}
	switch e.Method.Rows() {
	case train.RowsSFT:
		if ex.Rejected != "" {
			return row, "", false, fmt.Errorf("a preference pair trains a preference method (dpo, orpo, …), not %s", e.Method)
		}
		row, err = e.chatRow(ctx, msgs, media, answer(ex.Chosen), rec)
	case train.RowsUnpaired:
		row, err = e.unpairedRow(ctx, msgs, media, answer(ex.Chosen), ex.Desirable, rec)
	default:
		if ex.Rejected == "" {
			return row, "", false, fmt.Errorf("%s needs preference pairs: a better and a worse answer", e.Method)
		}
		row, err = e.pairRow(ctx, msgs, media, answer(ex.Chosen), answer(ex.Rejected), rec)
	}
	if err != nil {
		return row, "", false, err
	}
	note, ok = e.cut(&row)
	return row, note, ok, nil
}

// templateMessages is a prompt as the chat template reads it, and its
// media parts in order.
func templateMessages(msgs []prompt.Message) ([]chattemplate.Message, []MediaRef, error) {
	if len(msgs) == 0 {
		return nil, nil, errors.New("the example has no prompt")
	}
	out := make([]chattemplate.Message, 0, len(msgs))
	var media []MediaRef
	for i, m := range msgs {
		if !roles[string(m.Role)] {
			return nil, nil, fmt.Errorf("message %d: role %q is not one of system, developer, user, assistant, tool", i+1, m.Role)
		}
		tm := chattemplate.Message{Role: string(m.Role), Reasoning: m.Thinking, ToolCallID: m.ToolCallID, Name: m.ToolName}
		for _, c := range m.ToolCalls {
			if c.Name == "" {
				return nil, nil, fmt.Errorf("message %d: a tool call has no function name", i+1)
			}
			tm.ToolCalls = append(tm.ToolCalls, chattemplate.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		var text []string
		var parts []chattemplate.Part
		for _, p := range m.Content {
			switch p.Type {
			case prompt.Text:
				text = append(text, p.Text)
				parts = append(parts, chattemplate.Part{Type: "text", Text: p.Text})
			case prompt.Image, prompt.Audio, prompt.Video:
				if p.Name == "" {
					return nil, nil, fmt.Errorf("message %d: the %s part names no bytes", i+1, p.Type)
				}
				parts = append(parts, chattemplate.Part{Type: string(p.Type)})
				media = append(media, MediaRef{Kind: string(p.Type), Path: p.Name, Hash: p.Hash})
			default:
				return nil, nil, fmt.Errorf("message %d: part type %q is not text, image, audio or video", i+1, p.Type)
			}
		}
		if len(parts) == len(text) {
			tm.Content = strings.Join(text, "")
		} else {
			tm.Parts = parts
		}
		out = append(out, tm)
	}
	return out, media, nil
}

// EncodeExamples encodes examples as ReadSplit does a JSONL stream called
// name: rows named by their Source (or name:index), notes for rows cut or
// skipped, budget (when not nil) decreased by each row's tokens.
func EncodeExamples(ctx context.Context, name string, exs []Example, enc *Encoder, budget *int) (*Split, error) {
	s := &Split{Name: name}
	for i, ex := range exs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		src := ex.Source
		if src == "" {
			src = fmt.Sprintf("%s:%d", name, i+1)
		}
		row, note, ok, err := enc.EncodeExample(ctx, ex)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		if note != "" {
			s.Notes.add(src, note, !ok)
		}
		if !ok {
			continue
		}
		if budget != nil {
			if *budget -= row.Tokens(); *budget < 0 {
				return nil, fmt.Errorf("%s: the examples hold more than %d tokens, the most one run loads: use fewer rows", src, MaxDatasetTokens)
			}
		}
		row.Source = src
		s.Rows = append(s.Rows, row)
	}
	if len(s.Rows) == 0 {
		if s.Notes.Skipped > 0 {
			return nil, fmt.Errorf("%s: every row was skipped: %s", name, s.Notes)
		}
		return nil, fmt.Errorf("%s has no rows", name)
	}
	return s, nil
}
