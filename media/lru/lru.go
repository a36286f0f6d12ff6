// Package lru is a bounded cache that forgets the least recently used
// entries once their sizes add up past a limit. The decoded-picture pool,
// the Gemma-4 processor's prepared media and the engine's tower outputs
// each keep one. It is safe for concurrent use.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values with a size each; the sizes stay within Limit.
type Cache[V any] struct {
	limit   int64
	onEvict func(V) // called for every value dropped (evicted, replaced, cleared)

	mu    sync.Mutex
	used  int64
	order *list.List // front = most recent; values are *entry[V]
	byKey map[string]*list.Element
}

type entry[V any] struct {
	key  string
	val  V
	size int64
}

// New returns a cache holding at most limit in total size; onEvict, when
// set, is told about each value the cache lets go of.
func New[V any](limit int64, onEvict func(V)) *Cache[V] {
	return &Cache[V]{limit: limit, onEvict: onEvict, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get returns the value under key and marks it recently used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[V]).val, true
	}
	var zero V
	return zero, false
}

// Put stores v under key. A value larger than the whole limit is not kept
// (Put reports false, and onEvict is not called: the caller still owns it).
func (c *Cache[V]) Put(key string, v V, size int64) bool {
	if size > c.limit {
		return false
	}
	c.mu.Lock()
	var dropped []V
	if el, ok := c.byKey[key]; ok {
		dropped = append(dropped, c.removeLocked(el))
	}
	c.byKey[key] = c.order.PushFront(&entry[V]{key, v, size})
	c.used += size
	for c.used > c.limit {
		dropped = append(dropped, c.removeLocked(c.order.Back()))
	}
	c.mu.Unlock()
	c.evict(dropped)
	return true
}

// Clear drops every entry.
func (c *Cache[V]) Clear() {
	c.mu.Lock()
	var dropped []V
	for el := c.order.Front(); el != nil; el = el.Next() {
		dropped = append(dropped, el.Value.(*entry[V]).val)
	}
	c.order.Init()
	c.byKey = map[string]*list.Element{}
	c.used = 0
	c.mu.Unlock()
	c.evict(dropped)
}

// Used is the total size held.
func (c *Cache[V]) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len is the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache[V]) removeLocked(el *list.Element) V {
	e := el.Value.(*entry[V])
	c.order.Remove(el)
	delete(c.byKey, e.key)
	c.used -= e.size
	return e.val
}

func (c *Cache[V]) evict(vs []V) {
	if c.onEvict == nil {
		return
	}
	for _, v := range vs {
		c.onEvict(v)
	}
}
