package trainset

import (
	"encoding/json"
	"errors"
	"fmt"
	"perch/engine/train"
)

// pretokenized is {"input_ids": [...], "prompt_len": P}: the loss counts
// targets t with P <= t < len (P 0 or absent: every token after the first).
func (e *Encoder) pretokenized(rec *record) (train.Row, error) {
	ids, err := e.ids(rec.InputIDs, "input_ids")
	if err != nil {
		return train.Row{}, err
	}
	if len(ids) < 2 {
		return train.Row{}, errors.New("\"input_ids\" needs at least 2 tokens")
	}
	p := 0
	if has(rec.PromptLen) {
		if err := json.Unmarshal(rec.PromptLen, &p); err != nil {
			return train.Row{}, errors.New("\"prompt_len\" must be a whole number")
		}
	}
	if p < 0 || p >= len(ids) {
		return train.Row{}, fmt.Errorf("\"prompt_len\" %d is outside 0..%d (the row has %d tokens and needs a target)", p, len(ids)-1, len(ids))
	}
	return train.Row{IDs: ids, PromptLen: max(p, 1)}, nil
}

// pretokenizedPair is {"prompt_ids", "chosen_ids", "rejected_ids"}, the
// responses without the prompt.
func (e *Encoder) pretokenizedPair(rec *record) (train.Row, error) {
	var row train.Row
	var err error
	if row.Prompt, err = e.ids(rec.PromptIDs, "prompt_ids"); err != nil {
		return row, err
	}
	if row.Chosen, err = e.ids(rec.ChosenIDs, "chosen_ids"); err != nil {
		return row, err
	}
	if row.Rejected, err = e.ids(rec.RejectedIDs, "rejected_ids"); err != nil {
		return row, err
	}
	if len(row.Prompt) == 0 || len(row.Chosen) == 0 || len(row.Rejected) == 0 {
		return row, errors.New("\"prompt_ids\", \"chosen_ids\" and \"rejected_ids\" must each hold at least one token")
	}
	return row, nil
}

// ids reads a list of token ids, each inside the vocabulary.
func (e *Encoder) ids(raw json.RawMessage, name string) ([]int32, error) {
	if !has(raw) {
		return nil, fmt.Errorf("%q is missing", name)
	}
	var v []int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%q must be a list of token ids", name)
	}
	out := make([]int32, len(v))
	for i, id := range v {
		if id < 0 || (e.Vocab > 0 && id >= int64(e.Vocab)) || id > 1<<31-1 {
			return nil, fmt.Errorf("%q: token %d at position %d is outside the vocabulary (0..%d)", name, id, i, e.Vocab-1)
		}
		out[i] = int32(id)
	}
	return out, nil
}
