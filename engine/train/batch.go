package train

import (
	"fmt"
	"math/rand/v2"
)

// Batcher deals the training rows out in batches, one stream through
// epoch after epoch: in file order (no shuffle), or in a fresh seeded
// permutation each epoch. A batch may span two epochs, so every row is
// used as often as any other. The order depends only on the seed and the
// rows, never on what else the engine does.
type Batcher struct {
	rows    []Row
	size    int
	shuffle bool
	seed    uint64
	order   []int
	pos     int
	epoch   int
}

// NewBatcher checks that rows can fill a batch of size.
func NewBatcher(rows []Row, size int, seed uint64, shuffle bool) (*Batcher, error) {
	if size < 1 {
		return nil, fmt.Errorf("batch size %d: it must be at least 1", size)
	}
	if len(rows) < size {
		return nil, fmt.Errorf("the training set has %d rows, fewer than the batch size %d: add rows or lower --batch-size", len(rows), size)
	}
	b := &Batcher{rows: rows, size: size, shuffle: shuffle, seed: seed}
	b.deal()
	return b, nil
}

// deal orders the rows of the current epoch.
func (b *Batcher) deal() {
	b.order = make([]int, len(b.rows)) // a new slice: positions share the old one
	for i := range b.order {
		b.order[i] = i
	}
	if b.shuffle {
		rng := rand.New(rand.NewPCG(b.seed, uint64(b.epoch)))
		rng.Shuffle(len(b.order), func(i, j int) { b.order[i], b.order[j] = b.order[j], b.order[i] })
	}
	b.pos = 0
}

// Next returns the next batch.
func (b *Batcher) Next() []Row {
	out := make([]Row, 0, b.size)
	for len(out) < b.size {
		if b.pos == len(b.order) {
			b.epoch++
			b.deal()
		}
		out = append(out, b.rows[b.order[b.pos]])
		b.pos++
	}
	return out
}

// batchPos is where the batcher stands: the epoch, the rows dealt of it
// and its order (shared, never changed in place).
type batchPos struct {
	epoch, pos int
	order      []int
}

func (b *Batcher) position() batchPos { return batchPos{b.epoch, b.pos, b.order} }

// seek moves the batcher to a saved position; the epoch's order, dealt
// again from the seed, must be the saved one (the same rows).
func (b *Batcher) seek(epoch, pos int, order []int) error {
	b.epoch = epoch
	b.deal()
	if len(order) != len(b.order) || pos > len(order) {
		return fmt.Errorf("the run dealt %d rows per epoch, the data now has %d: continue it with the data it started with", len(order), len(b.order))
	}
	for i := range order {
		if order[i] != b.order[i] {
			return fmt.Errorf("the row order of epoch %d differs from the run's (another seed or shuffle setting?)", epoch+1)
		}
	}
	b.pos = pos
	return nil
}

// Epoch is the number of full passes over the rows so far.
func (b *Batcher) Epoch() int { return b.epoch }

// evalBatches cuts rows into batches of size in file order, at most limit
// of them (limit < 0: all).
func evalBatches(rows []Row, size, limit int) [][]Row {
	var out [][]Row
	for i := 0; i < len(rows) && (limit < 0 || len(out) < limit); i += size {
		out = append(out, rows[i:min(i+size, len(rows))])
	}
	return out
}
