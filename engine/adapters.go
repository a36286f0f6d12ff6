package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"perch/engine/gemma4"
	"perch/engine/lora"
	"perch/engine/tensor"
)

// Requests may name a LoRA adapter folder (Request.Adapter, or the engine's
// Options.Adapter): it is read and checked against the model on the
// caller's goroutine, bound on the backend the first time a request uses
// it, and switched on for that request only (one map swap on the model).
// The prefix cache keys on the adapter's content, so a conversation never
// continues from keys and values another adapter made.

// maxHostAdapters and maxBoundAdapters bound the adapters kept read and
// kept on the backend.
const (
	maxHostAdapters  = 8
	maxBoundAdapters = 4
)

// requestAdapter is an adapter as a request uses it.
type requestAdapter struct {
	dir  string
	id   string // content hash of the leaves and config: the cache key
	host *lora.Adapter
}

// adapterSet holds the adapters requests asked for.
type adapterSet struct {
	mu   sync.Mutex
	host map[string]*requestAdapter // by folder and file stamps; callers' goroutines
	// Engine thread only: bound adapters, most recently used last.
	bound []boundAdapter
}

type boundAdapter struct {
	id string
	b  *lora.Bound
}

// load returns the adapter in dir, read once per change of its files and
// matched against text's projections.
func (s *adapterSet) load(dir string, text *gemma4.Text) (*requestAdapter, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	stamp := abs
	for _, f := range []string{lora.WeightsFile, lora.ConfigFile} {
		st, err := os.Stat(filepath.Join(abs, f))
		if err != nil {
			return nil, fmt.Errorf("adapter %s: %w", dir, err)
		}
		stamp += fmt.Sprintf("|%d|%d", st.Size(), st.ModTime().UnixNano())
	}
	s.mu.Lock()
	ra := s.host[stamp]
	s.mu.Unlock()
	if ra != nil {
		return ra, nil
	}
	a, err := lora.Load(abs)
	if err != nil {
		return nil, err
	}
	if _, _, err := a.Match(text); err != nil {
		return nil, fmt.Errorf("adapter %s does not fit this model: %w", dir, err)
	}
	ra = &requestAdapter{dir: abs, id: contentID(a), host: a}
	s.mu.Lock()
	if s.host == nil || len(s.host) >= maxHostAdapters {
		s.host = map[string]*requestAdapter{}
	}
	s.host[stamp] = ra
	s.mu.Unlock()
	return ra, nil
}

// contentID hashes an adapter's config and leaves.
func contentID(a *lora.Adapter) string {
	h := sha256.New()
	cfg, _ := a.Config.MarshalJSON()
	h.Write(cfg)
	var buf [4]byte
	for _, n := range a.Names() {
		l := a.Leaves[n]
		fmt.Fprintf(h, "|%s%v|", n, l.Shape)
		for _, x := range l.Data {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
			h.Write(buf[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// use switches ra on for the next forward passes (nil: the base model),
// binding it on b first if needed (engine thread).
func (s *adapterSet) use(b tensor.Backend, text *gemma4.Text, ra *requestAdapter) error {
	if ra == nil {
		text.Adapter = nil
		return nil
	}
	for i, ba := range s.bound {
		if ba.id == ra.id {
			s.bound = append(append(s.bound[:i:i], s.bound[i+1:]...), ba)
			text.Adapter = ba.b.Adapter
			return nil
		}
	}
	x, err := lora.Bind(b, text, ra.host)
	if err != nil {
		return fmt.Errorf("adapter %s: %w", ra.dir, err)
	}
	if len(s.bound) >= maxBoundAdapters {
		s.bound[0].b.Free()
		s.bound = s.bound[1:]
	}
	s.bound = append(s.bound, boundAdapter{ra.id, x})
	text.Adapter = x.Adapter
	return nil
}

// free releases every bound adapter (engine thread).
func (s *adapterSet) free(text *gemma4.Text) {
	text.Adapter = nil
	for _, ba := range s.bound {
		ba.b.Free()
	}
	s.bound = nil
}

// adapterID is the cache identity of a request's adapter ("" for none).
func adapterID(ra *requestAdapter) string {
	if ra == nil {
		return ""
	}
	return ra.id
}
