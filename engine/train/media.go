package train

import (
	"context"
	"fmt"

	"perch/engine/gemma4"
	"perch/engine/gemma4/processor"
	"perch/engine/tensor"
)

// Media rows: a row's attachments are prepared (decoded, preprocessed,
// their placeholders expanded) by the model's processor as a chat
// request's are; their towers run frozen and their outputs are spliced into
// the prompt's embeddings as at inference. A dataset row lets its prepared
// media go after it is read and prepares them again just before its step
// (WithMedia), so a dataset of photos does not sit in memory.

// A MediaSource prepares a row's media again (engine/trainset makes them
// for the rows it reads from files or examples).
type MediaSource interface {
	Prepare(ctx context.Context) (*processor.Prepared, error)
}

// SetMediaSource makes s the way the row prepares its media again.
func (r *Row) SetMediaSource(s MediaSource) { r.source = s }

// WithMedia returns the row with its media prepared (Media, Blocks) when it
// has any; a row without media comes back as it is.
func (r Row) WithMedia(ctx context.Context) (Row, error) {
	if r.source == nil || r.Media != nil {
		return r, nil
	}
	prep, err := r.source.Prepare(ctx)
	if err != nil {
		return r, fmt.Errorf("%s: %w", r.Source, err)
	}
	r.Media, r.Blocks = prep.Media, prep.Blocks
	return r, nil
}

// Features runs the row's media through their frozen towers: one
// [rows, H] per item of Media.
func (r *Row) Features(b tensor.Backend, m *gemma4.Model) ([]tensor.Tensor, error) {
	out := make([]tensor.Tensor, len(r.Media))
	for i, pl := range r.Media {
		f, err := m.EncodeMedia(b, pl.Media)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", r.Source, pl.Name, err)
		}
		out[i] = f
	}
	return out, nil
}

// Inputs is the model input of one of the row's sequences (ids start with
// the row's prompt): with media, the text embeddings with feats (from
// Features) spliced at their rows, the per-layer ids with the placeholders
// set to pad, and the vision blocks.
func (r *Row) Inputs(b tensor.Backend, text *gemma4.Text, ids []int32, feats []tensor.Tensor, pad int32) (gemma4.Inputs, error) {
	in := gemma4.Inputs{IDs: b.FromInt32(ids, []int{1, len(ids)})}
	if len(r.Media) == 0 {
		return in, nil
	}
	embeds := text.Embed(in.IDs)
	ple := append([]int32(nil), ids...)
	for i, pl := range r.Media {
		var err error
		if embeds, err = gemma4.Splice(b, embeds, feats[i], pl.Rows); err != nil {
			return in, fmt.Errorf("%s: %s: %w", r.Source, pl.Name, err)
		}
		for _, row := range pl.Rows {
			ple[row] = pad
		}
	}
	in.Embeds, in.PLEIDs = embeds, b.FromInt32(ple, []int{1, len(ple)})
	if r.Blocks != nil {
		in.VisionBlocks = make([]int, len(ids))
		for i := range in.VisionBlocks {
			in.VisionBlocks[i] = -1
		}
		copy(in.VisionBlocks, r.Blocks)
	}
	return in, nil
}
