package picture

import (
	"context"
	"sync/atomic"

	"perch/internal/contenthash"
	"perch/media/lru"
)

// decodes counts the images whose pixels this process has decoded.
var decodes atomic.Int64

// Decodes is how many images this process has decoded so far (past their
// header); tests use it to see that a photo is decoded once.
func Decodes() int64 { return decodes.Load() }

// Pool decodes pictures with a bound on how many decode at once (a decode
// can take hundreds of megabytes), and keeps recently decoded ones by
// content hash, so the same bytes are decoded once: the chat decodes a
// photo for its thumbnail when it is attached, and the model's processor
// prepares it from that same decode when it is sent. Safe for concurrent use.
type Pool struct {
	lim   Limits
	slots chan struct{}
	cache *lru.Cache[*pooled]
}

type pooled struct {
	src  *Source
	info Info
}

// PoolOptions size a Pool; zero values take the defaults.
type PoolOptions struct {
	Limits     Limits // per image (default DefaultLimits)
	Decoders   int    // decodes at once (default 2)
	CacheBytes int64  // decoded pictures kept (default 128 MiB)
}

// NewPool returns a pool.
func NewPool(o PoolOptions) *Pool {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits
	}
	if o.Decoders <= 0 {
		o.Decoders = 2
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 128 << 20
	}
	return &Pool{lim: o.Limits, slots: make(chan struct{}, o.Decoders), cache: lru.New[*pooled](o.CacheBytes, nil)}
}

// Limits are the per-image limits the pool applies.
func (p *Pool) Limits() Limits { return p.lim }

// Decode is DecodeSource through the pool: a cached decode of the same
// bytes, or a new one once a decoder slot is free (or ctx ends). The
// returned source is shared: read it, never change it.
func (p *Pool) Decode(ctx context.Context, data []byte) (*Source, Info, error) {
	return p.DecodeHashed(ctx, data, "")
}

// DecodeHashed is Decode of bytes whose content hash the caller holds
// (contenthash.Of; "" hashes them here).
func (p *Pool) DecodeHashed(ctx context.Context, data []byte, hash string) (*Source, Info, error) {
	key := hash
	if key == "" {
		key = contenthash.Of(data)
	}
	if hit, ok := p.cache.Get(key); ok {
		return hit.src, hit.info, nil
	}
	if _, err := Config(data); err != nil { // refuse non-images without waiting for a slot
		return nil, Info{}, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, Info{}, ctx.Err()
	}
	defer func() { <-p.slots }()
	if hit, ok := p.cache.Get(key); ok { // decoded while this one waited
		return hit.src, hit.info, nil
	}
	src, info, err := DecodeSource(ctx, data, p.lim)
	if err != nil {
		return nil, info, err
	}
	p.cache.Put(key, &pooled{src, info}, src.bytes())
	return src, info, nil
}
