package engine

import (
	"fmt"
)

// videoTokenID is config's video_token_id, else the tokenizer's <|video|>
// (HF adds that token when a checkpoint's config lacks it).
func (e *Engine) videoTokenID() int32 {
	if e.cfg.VideoTokenID != 0 {
		return e.cfg.VideoTokenID
	}
	if id, ok := e.tok.TokenID("<|video|>"); ok {
		return id
	}
	return 0
}

// layout says where each item's soft tokens sit in the prompt.
type layout struct {
	rows   [][]int // per item (a video's audio track follows as its own entry)
	items  []*mediaItem
	blocks []int // per position: image/video block id, or -1
	kinds  map[string]int
	pleIDs []int32 // ids for the per-layer embeddings: placeholders -> pad
}

// layoutOf finds the placeholder runs of items in ids (document order) and
// checks that their number matches what the encoders will produce.
func (e *Engine) layoutOf(ids []int32, items []*mediaItem) (*layout, error) {
	img, aud, vid := e.cfg.ImageTokenID, e.cfg.AudioTokenID, e.videoTokenID()
	var flat []*mediaItem
	for _, it := range items {
		flat = append(flat, it)
		if it.track != nil {
			flat = append(flat, it.track)
		}
	}
	lay := &layout{blocks: make([]int, len(ids)), kinds: map[string]int{}, pleIDs: append([]int32(nil), ids...)}
	pad := int32(e.cfg.Text.PadTokenID)
	next, block := 0, -1
	for i := range lay.blocks {
		lay.blocks[i] = -1
	}
	for i := 0; i < len(ids); {
		id := ids[i]
		var kind PartType
		switch {
		case id == img && img != 0:
			kind = PartImage
		case id == aud && aud != 0:
			kind = PartAudio
		case id == vid && vid != 0:
			kind = PartVideo
		default:
			lay.kinds["text"]++
			i++
			continue
		}
		j := i
		for j < len(ids) && ids[j] == id {
			j++
		}
		if next >= len(flat) {
			return nil, fmt.Errorf("the prompt has more %s placeholders than attachments", kind)
		}
		it := flat[next]
		want := it.audioTokens
		if it.kind != PartAudio {
			// a video's frames are separate runs (timestamps and boi/eoi between them)
			want = 0
			for _, n := range it.tokens {
				want += n
			}
		}
		if it.kind != kind {
			return nil, fmt.Errorf("placeholder run at token %d is %s but attachment %d (%s) is %s", i, kind, next+1, it.name, it.kind)
		}
		var rows []int
		if len(lay.rows) == next {
			lay.rows = append(lay.rows, nil)
			lay.items = append(lay.items, it)
		}
		rows = lay.rows[next]
		if kind != PartAudio {
			block++
		}
		for k := i; k < j; k++ {
			rows = append(rows, k)
			lay.pleIDs[k] = pad
			if kind != PartAudio {
				lay.blocks[k] = block
			}
		}
		lay.rows[next] = rows
		lay.kinds[string(kind)] += j - i
		if len(rows) > want {
			return nil, fmt.Errorf("%s %s has %d placeholder tokens, its encoder gives %d", it.kind, it.name, len(rows), want)
		}
		if len(rows) == want {
			next++
		}
		i = j
	}
	if next != len(flat) {
		return nil, fmt.Errorf("%d attachments but the prompt only has placeholders for %d", len(flat), next)
	}
	return lay, nil
}

// expandIDs expands raw prompt ids that carry one placeholder id per item
// (as the chat template emits them) exactly as a rendered prompt is.
func (e *Engine) expandIDs(ids []int32, items []*mediaItem) ([]int32, error) {
	ph := e.placeholderText()
	ids = append([]int32(nil), ids...)
	var out []int32
	k := 0
	for _, id := range ids {
		var kind PartType
		switch id {
		case e.cfg.ImageTokenID:
			kind = PartImage
		case e.cfg.AudioTokenID:
			kind = PartAudio
		case e.videoTokenID():
			kind = PartVideo
		}
		if kind == "" || id == 0 {
			out = append(out, id)
			continue
		}
		if k >= len(items) {
			return nil, fmt.Errorf("--prompt-ids has more %s placeholders than attachments", kind)
		}
		if items[k].kind != kind {
			return nil, fmt.Errorf("placeholder %d is %s but attachment %d is %s", k+1, kind, k+1, items[k].kind)
		}
		out = append(out, e.tok.Encode(ph.expansion(items[k]), false)...)
		k++
	}
	if k != len(items) {
		return nil, fmt.Errorf("%d attachments but --prompt-ids has %d placeholders", len(items), k)
	}
	return out, nil
}

func (l *layout) hasVisual() bool {
	for _, b := range l.blocks {
		if b >= 0 {
			return true
		}
	}
	return false
}
