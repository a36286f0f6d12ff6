package engine

import (
	"fmt"
	"time"

	"perch/engine/gemma4"
	"perch/engine/tensor"
	"perch/media/lru"
)

// encoderCache keeps tower outputs by content key (LRU, bounded by bytes),
// so a follow-up about the same photo or clip runs no tower. The tensors
// are pinned while cached. Engine thread only.
type encoderCache = lru.Cache[tensor.Tensor]

func newEncoderCache(b tensor.Backend, limit int64) *encoderCache {
	return lru.New(limit, func(t tensor.Tensor) { b.Unpin(t) })
}

// embeddings builds the prompt's input rows: text embeddings with every
// placeholder run overwritten by its item's features ([1, L, H]).
// Items wholly inside the first `cached` positions (already in the KV
// cache) are skipped.
func (e *Engine) embeddings(j *job, stats *Stats, cached int) (tensor.Tensor, error) {
	b := e.b
	ids := b.FromInt32(j.prompt, []int{1, len(j.prompt)})
	embeds := e.model.Text.Embed(ids)
	for i, pl := range j.prep.Media {
		if len(pl.Rows) == 0 || pl.Rows[len(pl.Rows)-1] < cached {
			continue
		}
		stage := map[PartType]Stage{PartImage: StageImage, PartAudio: StageAudio, PartVideo: StageVideo}[pl.Kind]
		if !j.send(Event{Kind: EventProgress, Stage: stage, Fraction: float64(i) / float64(len(j.prep.Media))}) {
			return nil, j.ctx.Err()
		}
		feats, err := e.features(pl.Media, stats)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pl.Name, err)
		}
		if embeds, err = gemma4.Splice(b, embeds, feats, pl.Rows); err != nil {
			return nil, fmt.Errorf("%s: %w", pl.Name, err)
		}
	}
	return embeds, b.Err()
}

// features returns an item's tower output [rows, H], from the cache when
// the same content was encoded before.
func (e *Engine) features(m *gemma4.Media, stats *Stats) (tensor.Tensor, error) {
	if t, ok := e.encCache.Get(m.Key); ok {
		stats.EncoderHits++
		return t, nil
	}
	b := e.b
	t0 := time.Now()
	defer func() { stats.TowerTime += time.Since(t0) }() // a tower's run only: cached and skipped items cost none
	feats, err := e.model.EncodeMedia(b, m)
	if err != nil {
		return nil, err
	}
	if err := b.Eval(feats); err != nil {
		return nil, err
	}
	b.Pin(feats)
	if !e.encCache.Put(m.Key, feats, int64(tensor.Size(feats))*4) {
		b.Unpin(feats) // larger than the whole cache
	}
	return feats, nil
}
