package engine

import (
	"container/list"
	"fmt"
	"time"

	"perch/engine/gemma4"
	"perch/engine/tensor"
	"perch/media/logmel"
)

// encoderCache keeps tower outputs by content key (LRU, bounded by bytes),
// so a follow-up about the same photo or clip runs no tower. Engine thread only.
type encoderCache struct {
	limit, used int64
	order       *list.List // front = most recent; values are *encoded
	byKey       map[string]*list.Element
}

type encoded struct {
	key   string
	t     tensor.Tensor // [rows, H], pinned
	bytes int64
}

func newEncoderCache(limit int64) *encoderCache {
	return &encoderCache{limit: limit, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *encoderCache) get(key string) tensor.Tensor {
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*encoded).t
	}
	return nil
}

func (c *encoderCache) put(b tensor.Backend, key string, t tensor.Tensor) {
	n := int64(tensor.Size(t)) * 4
	if n > c.limit {
		return
	}
	b.Pin(t)
	c.byKey[key] = c.order.PushFront(&encoded{key, t, n})
	c.used += n
	for c.used > c.limit {
		old := c.order.Back()
		ev := old.Value.(*encoded)
		b.Unpin(ev.t)
		c.used -= ev.bytes
		delete(c.byKey, ev.key)
		c.order.Remove(old)
	}
}

func (c *encoderCache) clear(b tensor.Backend) {
	for el := c.order.Front(); el != nil; el = el.Next() {
		b.Unpin(el.Value.(*encoded).t)
	}
	c.order.Init()
	c.byKey = map[string]*list.Element{}
	c.used = 0
}

// embeddings builds the prompt's input rows: text embeddings with every
// placeholder run overwritten by its item's features ([1, L, H]).
// Items wholly inside the first `cached` positions (already in the KV
// cache) are skipped.
func (e *Engine) embeddings(j *job, stats *Stats, cached int) (tensor.Tensor, error) {
	b, m := e.b, e.model
	ids := b.FromInt32(j.prompt, []int{1, len(j.prompt)})
	embeds := m.Text.Embed(ids)
	t0 := time.Now()
	defer func() { stats.TowerTime += time.Since(t0) }()
	for i, it := range j.lay.items {
		if rows := j.lay.rows[i]; rows[len(rows)-1] < cached {
			continue
		}
		feats, err := e.features(it, stats)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.name, err)
		}
		if it.kind == PartAudio {
			feats = audioRows(b, feats, it.audioTokens)
		}
		if embeds, err = gemma4.Splice(b, embeds, feats, j.lay.rows[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", it.name, err)
		}
		if !j.send(Event{Kind: EventProgress, Stage: "encode", Fraction: float64(i+1) / float64(len(j.lay.items))}) {
			return nil, j.ctx.Err()
		}
	}
	return embeds, b.Err()
}

// features returns an item's tower output [rows, H], from the cache when
// the same content was encoded before.
func (e *Engine) features(it *mediaItem, stats *Stats) (tensor.Tensor, error) {
	if t := e.encCache.get(it.key); t != nil {
		stats.EncoderHits++
		return t, nil
	}
	b, m := e.b, e.model
	var feats tensor.Tensor
	switch it.kind {
	case PartImage, PartVideo:
		if m.Vision == nil {
			return nil, fmt.Errorf("this model has no vision tower")
		}
		var parts []tensor.Tensor
		for k, f := range it.frames {
			t, err := m.Vision.Encode(f)
			if err != nil {
				return nil, err
			}
			if n := t.Shape()[0]; n != it.tokens[k] {
				return nil, fmt.Errorf("the vision tower gave %d rows for %d placeholders", n, it.tokens[k])
			}
			parts = append(parts, t)
		}
		feats = parts[0]
		if len(parts) > 1 {
			feats = b.Concat(0, parts...)
		}
	case PartAudio:
		t, err := e.encodeAudio(it)
		if err != nil {
			return nil, err
		}
		feats = t
	}
	if err := b.Eval(feats); err != nil {
		return nil, err
	}
	e.encCache.put(b, it.key, feats)
	return feats, nil
}

// audioRows picks the encoder row for each audio placeholder as mlx-vlm's
// masked_scatter does: all rows in order, wrapping when there are more
// placeholders than rows (the golden fixtures follow mlx-vlm; HF would
// drop invalid rows and reject a count mismatch).
func audioRows(b tensor.Backend, feats tensor.Tensor, tokens int) tensor.Tensor {
	rows := feats.Shape()[0]
	if rows == tokens {
		return feats
	}
	pick := logmel.PlaceholderRows(tokens, rows)
	idx := make([]int32, tokens)
	for i, r := range pick {
		idx[i] = int32(r)
	}
	return b.Take(feats, b.FromInt32(idx, []int{tokens}), 0)
}
