package gocpu

import "sync"

// ropeMemo keeps the cos/sin tables of the last one-position RoPE calls: a
// decode step rotates q and k of every layer at the same position, with
// one or two frequency sets (sliding and full layers), so it computes each
// table once per token instead of once per call. The tables are the ones
// ropeTables gives, so the bits are too.
type ropeMemo struct {
	mu      sync.Mutex
	entries [4]ropeEntry
	next    int
}

// ropeKey is what a table depends on (freqs: the tensor of explicit
// frequencies, if any; it is not written after it is made).
type ropeKey struct {
	offset, half int
	base, scale  float32
	freqs        *T
}

type ropeEntry struct {
	key      ropeKey
	cos, sin []float32
}

// get returns the tables for key at one position (L == 1), or nil.
func (m *ropeMemo) get(key ropeKey, L int) (cos, sin []float32) {
	if L != 1 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.cos != nil && e.key == key {
			return e.cos, e.sin
		}
	}
	return nil, nil
}

// put keeps one position's tables, replacing the oldest.
func (m *ropeMemo) put(key ropeKey, L int, cos, sin []float32) {
	if L != 1 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[m.next] = ropeEntry{key, cos, sin}
	m.next = (m.next + 1) % len(m.entries)
}
