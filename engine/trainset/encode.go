package trainset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"perch/engine/chattemplate"
	"perch/engine/gemma4/processor"
	"perch/engine/tokenizer"
	"perch/engine/train"
)

// DefaultMaxLen is the row length limit when none is given (mlx-lm's).
const DefaultMaxLen = 2048

// Encoder turns dataset lines into rows with the model's own chat template
// and tokenizer. Safe for concurrent use.
//
// Chat rows ({"messages"}, {"prompt", "completion"}, preference pairs) are
// split as inference sees them: the prompt is the conversation before the
// last answer rendered with the generation prompt, exactly as a chat
// request is; the target is what the template writes for the answer turn
// after the turn header the two share (the answer and its end-of-turn).
// Only the target counts in the loss (mlx-lm's --mask-prompt) unless Whole.
type Encoder struct {
	Template *chattemplate.Template
	Tok      *tokenizer.Tokenizer
	Method   train.Method
	MaxLen   int // rows are cut to this many tokens (0: DefaultMaxLen)
	Vocab    int // ids of pre-tokenized rows must be below this
	// Processor prepares rows with image, audio or video parts, as chat
	// requests are (nil: such rows are refused); media paths are relative
	// to Dir.
	Processor *processor.Processor
	Dir       string
	// ReadMedia, when set, gives a media part's bytes by the name the row
	// gives it (an app's attachments, by hash) instead of a file under Dir.
	ReadMedia func(kind, name string) ([]byte, error)
	// Whole makes chat rows of SFT learn every token after <bos> (mlx-lm
	// without --mask-prompt); by default only the answer is learnt.
	Whole bool
	// Test reads a folder's test.jsonl too (perch train --test); without
	// it the file is not opened.
	Test bool
}

// record is a dataset line; which keys are present decides its format.
type record struct {
	Messages       json.RawMessage   `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	System         json.RawMessage   `json:"system"`
	Prompt         json.RawMessage   `json:"prompt"`
	Completion     json.RawMessage   `json:"completion"`
	Text           json.RawMessage   `json:"text"`
	Chosen         json.RawMessage   `json:"chosen"`
	Rejected       json.RawMessage   `json:"rejected"`
	InputIDs       json.RawMessage   `json:"input_ids"`
	PromptLen      json.RawMessage   `json:"prompt_len"`
	PromptIDs      json.RawMessage   `json:"prompt_ids"`
	ChosenIDs      json.RawMessage   `json:"chosen_ids"`
	RejectedIDs    json.RawMessage   `json:"rejected_ids"`
	Label          json.RawMessage   `json:"label"`
	EnableThinking *bool             `json:"enable_thinking"`
}

func has(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// Encode turns one line into a row. A row longer than MaxLen comes back
// cut, with a note saying so; a row with nothing left to learn once cut
// comes back with ok false and the note.
func (e *Encoder) Encode(ctx context.Context, line []byte) (row train.Row, note string, ok bool, err error) {
	var rec record
	if err := strictUnmarshal(line, &rec); err != nil {
		return row, "", false, fmt.Errorf("not a JSON object: %v", err)
	}
	kind := e.Method.Rows()
	sft := kind == train.RowsSFT
	switch {
	case kind == train.RowsUnpaired:
		row, err = e.unpaired(ctx, &rec)
	case has(rec.Label):
		return row, "", false, fmt.Errorf("a {\"prompt\", \"completion\", \"label\"} row trains kto, not %s", e.Method)
	case has(rec.InputIDs):
		if !sft {
			return row, "", false, fmt.Errorf("an {\"input_ids\"} row trains sft; %s needs {\"prompt_ids\", \"chosen_ids\", \"rejected_ids\"}", e.Method)
		}
		row, err = e.pretokenized(&rec)
	case has(rec.PromptIDs) || has(rec.ChosenIDs) || has(rec.RejectedIDs):
		if sft {
			return row, "", false, errors.New("a {\"prompt_ids\", \"chosen_ids\", \"rejected_ids\"} row trains a preference method (dpo, orpo, …), not sft")
		}
		row, err = e.pretokenizedPair(&rec)
	case has(rec.Chosen) || has(rec.Rejected):
		if sft {
			return row, "", false, errors.New("a preference row ({\"prompt\", \"chosen\", \"rejected\"}) trains a preference method (dpo, orpo, …), not sft")
		}
		if isMessagesObject(rec.Chosen) || isMessagesObject(rec.Rejected) {
			row, err = e.conversationPair(ctx, &rec)
		} else {
			row, err = e.pair(ctx, &rec)
		}
	case !sft:
		return row, "", false, fmt.Errorf("%s needs preference rows: {\"prompt\", \"chosen\", \"rejected\"}, {\"chosen\": {\"messages\"}, \"rejected\": {\"messages\"}} or {\"prompt_ids\", \"chosen_ids\", \"rejected_ids\"}", e.Method)
	case has(rec.Messages):
		row, err = e.messages(ctx, &rec)
	case has(rec.Prompt) || has(rec.Completion):
		row, err = e.completion(ctx, &rec)
	case has(rec.Text):
		row, err = e.text(&rec)
	default:
		return row, "", false, errors.New("no known format: want {\"messages\"}, {\"prompt\", \"completion\"}, {\"text\"} or {\"input_ids\", \"prompt_len\"}")
	}
	var long *promptTooLong
	if errors.As(err, &long) {
		return row, long.note(), false, nil
	}
	if err != nil {
		return row, "", false, err
	}
	note, ok = e.cut(&row)
	return row, note, ok, nil
}

func (e *Encoder) maxLen() int {
	if e.MaxLen > 0 {
		return e.MaxLen
	}
	return DefaultMaxLen
}

// cut shortens a row to MaxLen, keeping the prompt whole.
func (e *Encoder) cut(r *train.Row) (string, bool) {
	limit := e.maxLen()
	if r.IDs != nil {
		n := len(r.IDs)
		if n <= limit {
			return "", true
		}
		if r.PromptLen >= limit {
			return fmt.Sprintf("the prompt alone is %d tokens, not under --max-seq-len %d: row skipped", r.PromptLen, limit), false
		}
		r.IDs = r.IDs[:limit]
		return fmt.Sprintf("cut from %d to %d tokens", n, limit), true
	}
	P, n := len(r.Prompt), len(r.Prompt)+max(len(r.Chosen), len(r.Rejected))
	if n <= limit {
		return "", true
	}
	if P >= limit {
		return fmt.Sprintf("the prompt alone is %d tokens, not under --max-seq-len %d: row skipped", P, limit), false
	}
	r.Chosen = r.Chosen[:min(len(r.Chosen), limit-P)]
	if r.Rejected != nil {
		r.Rejected = r.Rejected[:min(len(r.Rejected), limit-P)]
	}
	return fmt.Sprintf("responses cut from %d to %d tokens with the prompt", n, limit), true
}

// messages is a {"messages": [...]} row: the loss is on the last message,
// which must be the assistant's.
func (e *Encoder) messages(ctx context.Context, rec *record) (train.Row, error) {
	msgs, media, err := parseMessages(rec.Messages, "messages")
	if err != nil {
		return train.Row{}, err
	}
	n := len(msgs)
	if msgs[n-1].Role != "assistant" {
		return train.Row{}, fmt.Errorf("the last message is the %s's: it must be the assistant's answer (the loss is on the last message)", msgs[n-1].Role)
	}
	if n < 2 {
		return train.Row{}, errors.New("the conversation has only the answer: give at least one message before it")
	}
	if hasMedia(msgs[n-1]) {
		return train.Row{}, errors.New("the answer (the last message) cannot carry media: attach them to an earlier turn")
	}
	return e.chatRow(ctx, msgs[:n-1], media, msgs[n-1:], rec)
}

// completion is a {"prompt", "completion"} row: a user turn and the answer.
func (e *Encoder) completion(ctx context.Context, rec *record) (train.Row, error) {
	if !has(rec.Prompt) || !has(rec.Completion) {
		return train.Row{}, errors.New("a completion row needs both \"prompt\" and \"completion\"")
	}
	prompt, media, err := e.turns(rec, rec.Prompt, "prompt", "user")
	if err != nil {
		return train.Row{}, err
	}
	answer, err := e.answer(rec, rec.Completion, "completion")
	if err != nil {
		return train.Row{}, err
	}
	return e.chatRow(ctx, prompt, media, answer, rec)
}

func (e *Encoder) chatRow(ctx context.Context, prompt []chattemplate.Message, media []MediaRef, answer []chattemplate.Message, rec *record) (train.Row, error) {
	p, target, err := e.split(ctx, prompt, answer, rec)
	if err != nil {
		return train.Row{}, err
	}
	row := train.Row{PromptLen: len(p)}
	if len(media) > 0 {
		if p, err = e.withMedia(ctx, prompt, media, rec, &row); err != nil {
			return train.Row{}, err
		}
		row.PromptLen = len(p)
	}
	row.IDs = append(p, target...)
	if e.Whole {
		row.PromptLen = 1
	}
	return row, nil
}

// pair is a {"prompt", "chosen", "rejected"} row (strings or message
// lists, optional "system").
func (e *Encoder) pair(ctx context.Context, rec *record) (train.Row, error) {
	if !has(rec.Prompt) || !has(rec.Chosen) || !has(rec.Rejected) {
		return train.Row{}, errors.New("a preference row needs \"prompt\", \"chosen\" and \"rejected\"")
	}
	prompt, media, err := e.turns(rec, rec.Prompt, "prompt", "user")
	if err != nil {
		return train.Row{}, err
	}
	var sides [2][]chattemplate.Message
	for i, side := range []struct {
		raw  json.RawMessage
		name string
	}{{rec.Chosen, "chosen"}, {rec.Rejected, "rejected"}} {
		if sides[i], err = e.answer(rec, side.raw, side.name); err != nil {
			return train.Row{}, err
		}
	}
	return e.pairRow(ctx, prompt, media, sides[0], sides[1], rec)
}

// pairRow is a preference row of prompt and its two answers.
func (e *Encoder) pairRow(ctx context.Context, prompt []chattemplate.Message, media []MediaRef, chosen, rejected []chattemplate.Message, rec *record) (train.Row, error) {
	var row train.Row
	for _, side := range []struct {
		answer []chattemplate.Message
		name   string
		out    *[]int32
	}{{chosen, "chosen", &row.Chosen}, {rejected, "rejected", &row.Rejected}} {
		p, target, err := e.split(ctx, prompt, side.answer, rec)
		if err != nil {
			return train.Row{}, fmt.Errorf("%s: %v", side.name, err)
		}
		row.Prompt, *side.out = p, target
	}
	if len(media) > 0 {
		var err error
		if row.Prompt, err = e.withMedia(ctx, prompt, media, rec, &row); err != nil {
			return train.Row{}, err
		}
	}
	return row, nil
}

// answer reads the answer side of a row: a string or assistant messages,
// without media.
func (e *Encoder) answer(rec *record, raw json.RawMessage, name string) ([]chattemplate.Message, error) {
	msgs, media, err := e.turns(rec, raw, name, "assistant")
	if err == nil && len(media) > 0 {
		err = fmt.Errorf("%q cannot carry media: attach them to the prompt", name)
	}
	return msgs, err
}

// turns reads a string (one message of role) or a message list; a
// "system" string goes first when the value is the prompt.
func (e *Encoder) turns(rec *record, raw json.RawMessage, name, role string) ([]chattemplate.Message, []MediaRef, error) {
	var msgs []chattemplate.Message
	if role == "user" && has(rec.System) {
		var sys string
		if err := json.Unmarshal(rec.System, &sys); err != nil {
			return nil, nil, errors.New("\"system\" must be a string")
		}
		msgs = append(msgs, chattemplate.Message{Role: "system", Content: sys})
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, fmt.Errorf("%q: %v", name, err)
		}
		return append(msgs, chattemplate.Message{Role: role, Content: s}), nil, nil
	}
	list, media, err := parseMessages(raw, name)
	if err != nil {
		return nil, nil, err
	}
	return append(msgs, list...), media, nil
}

// split renders prompt (with the generation prompt, as a chat request is)
// and the answer turns, and returns the prompt ids and the target ids: the
// answer's rendering after the turn header it shares with the generation
// prompt.
func (e *Encoder) split(ctx context.Context, prompt, answer []chattemplate.Message, rec *record) (p, target []int32, err error) {
	in := chattemplate.Input{Messages: prompt, Tools: rec.Tools, EnableThinking: rec.EnableThinking}
	base, err := e.Template.Render(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("chat template: %w", err)
	}
	in.AddGenerationPrompt = true
	withGen, err := e.Template.Render(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("chat template: %w", err)
	}
	in.AddGenerationPrompt = false
	in.Messages = append(append([]chattemplate.Message(nil), prompt...), answer...)
	full, err := e.Template.Render(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("chat template: %w", err)
	}
	if !strings.HasPrefix(withGen, base) || !strings.HasPrefix(full, base) {
		return nil, nil, errors.New("the chat template renders the earlier turns differently once the answer follows, so the answer cannot be told apart")
	}
	gen := e.Tok.Encode(withGen[len(base):], false)
	turn := e.Tok.Encode(full[len(base):], false)
	c := 0
	for c < len(gen) && c < len(turn) && gen[c] == turn[c] {
		c++
	}
	if c == len(turn) {
		return nil, nil, errors.New("the chat template renders no answer tokens (empty answer?)")
	}
	return e.Tok.Encode(withGen, false), turn[c:], nil
}

// text is a {"text"} row: every token after <bos> is a target, <eos> appended.
func (e *Encoder) text(rec *record) (train.Row, error) {
	var s string
	if err := json.Unmarshal(rec.Text, &s); err != nil {
		return train.Row{}, errors.New("\"text\" must be a string")
	}
	ids := e.Tok.Encode(s, true)
	if eos, ok := e.Tok.EOS(); ok && (len(ids) == 0 || ids[len(ids)-1] != eos) {
		ids = append(ids, eos)
	}
	if len(ids) < 2 {
		return train.Row{}, errors.New("\"text\" is empty")
	}
	return train.Row{IDs: ids, PromptLen: 1}, nil
}

func hasMedia(m chattemplate.Message) bool {
	for _, p := range m.Parts {
		if p.Type != "text" {
			return true
		}
	}
	return false
}
