package engine

import (
	"hash/fnv"

	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// ident is what a prompt position holds, for prefix matching: a token id,
// or for a media placeholder which content (hash) and which of its rows —
// identical placeholder ids behind different photos never match.
type ident struct {
	id    int32
	media uint64
	row   int32
}

// session keeps the KV caches of the last request so that a follow-up whose
// prompt starts the same way re-prefills only what is new. Engine thread only.
type session struct {
	caches  []kvcache.Cache
	idents  []ident // what the caches hold, position by position
	adapter string  // the LoRA adapter (content id) that computed them
}

// identities describes every prompt position of j.
func identities(j *job) []ident {
	out := make([]ident, len(j.prompt))
	for i, id := range j.prompt {
		out[i] = ident{id: id}
	}
	for _, m := range j.prep.Media {
		h := fnv.New64a()
		h.Write([]byte(m.Key))
		sum := h.Sum64()
		for r, pos := range m.Rows {
			out[pos].media, out[pos].row = sum, int32(r)
		}
	}
	return out
}

// take returns caches holding the longest usable prefix of want and its
// length; at least one prompt token is always left to prefill. Caches that
// cannot be cut back to the shared prefix, or that another adapter made,
// are dropped.
func (s *session) take(b tensor.Backend, fresh func() []kvcache.Cache, want []ident, adapter string) ([]kvcache.Cache, int) {
	caches, have := s.caches, s.idents
	s.caches, s.idents = nil, nil
	if caches != nil && s.adapter != adapter {
		release(b, caches)
		caches = nil
	}
	if caches == nil {
		return fresh(), 0
	}
	n := 0
	for n < len(have) && n < len(want)-1 && have[n] == want[n] {
		n++
	}
	if n == 0 || !trimAll(caches, len(have)-n) {
		release(b, caches)
		return fresh(), 0
	}
	return caches, n
}

// trimAll cuts every cache back by n tokens, or reports that one cannot.
func trimAll(caches []kvcache.Cache, n int) bool {
	if n == 0 {
		return true
	}
	for _, c := range caches {
		if c != nil && !c.CanTrim(n) {
			return false
		}
	}
	for _, c := range caches {
		if c != nil {
			c.Trim(n)
		}
	}
	return true
}

// keep stores caches that now hold idents.
func (s *session) keep(b tensor.Backend, caches []kvcache.Cache, idents []ident, adapter string) {
	release(b, s.caches)
	s.caches, s.idents, s.adapter = caches, idents, adapter
}

func (s *session) drop(b tensor.Backend) {
	release(b, s.caches)
	s.caches, s.idents = nil, nil
}

func release(b tensor.Backend, caches []kvcache.Cache) {
	for _, c := range caches {
		if c != nil {
			c.Release(b)
		}
	}
}
