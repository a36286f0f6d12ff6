package gocpu

import (
	"sync"
	"unsafe"
)

// Resident weights: a quantized Linear loaded from a checkpoint (FromBytes
// aliases the file's mapping, 4 KB pages) is copied, on its first use by a
// Linear op, into memory the OS backs with 2 MB pages where it can
// (Linux's transparent huge pages: hugeRegion). Decode streams every
// weight once per token, ~500 MB on E2B; with 4 KB pages that is over
// 100,000 TLB misses per token, which the page walks of a virtual machine
// make dearer still. The copy holds the same bytes, so results are the
// same; the file's pages it replaces are handed back to the OS (pageOut),
// so the weights count once in the process's resident memory.
// Options.MappedWeights keeps reading the mapping.

// residentChunk is the size of the regions copies are placed in (larger
// weights get their own); a multiple of 2 MB.
const residentChunk = 32 << 20

// residentSet is a Backend's copies, keyed by the packed weight tensor.
type residentSet struct {
	mu     sync.Mutex
	off    bool                 // no huge pages here: keep the mapping
	maps   [][]byte             // hugeRegion's mappings, freed by Close
	free   []byte               // the rest of the last region
	copies map[*T]*residentCopy // by l.W
	bytes  int64                // copied, for ActiveMemory
}

// residentCopy is one weight's packed words and scales and biases.
type residentCopy struct {
	packed           []uint32
	scalesH, biasesH []uint16
	scales, biases   []float32
}

// resident points w's packed words, scales and biases at their copy,
// making it on first use. Only tensors made by FromBytes (checkpoint data:
// loaded once, used every token) are copied, so a weight built per call
// cannot grow the set.
func (b *Backend) resident(w *weight) { b.useResident(w, true) }

// residentIfCopied is resident for a reader of a few rows (Embedding: the
// tied head's token rows), which never makes a copy but takes one that
// exists, since the mapping's pages behind it were handed back.
func (b *Backend) residentIfCopied(w *weight) { b.useResident(w, false) }

func (b *Backend) useResident(w *weight, create bool) {
	tw, ok := w.l.W.(*T)
	if b.opt.Plain || b.opt.MappedWeights || !ok || !tw.loaded || !w.quantized() || len(w.packed) == 0 {
		return
	}
	r := &b.res
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off {
		return
	}
	c := r.copies[tw]
	if c == nil && !create {
		return
	}
	if c == nil {
		if c = r.copy(w, b.pool); c == nil {
			return
		}
		if r.copies == nil {
			r.copies = map[*T]*residentCopy{}
		}
		r.copies[tw] = c
	}
	w.packed = c.packed
	if w.scalesH != nil {
		w.scalesH, w.biasesH = c.scalesH, c.biasesH
	} else {
		w.scales, w.biases = c.scales, c.biases
	}
}

// copy places w's arrays in huge-page memory, the workers copying side by
// side (nil, and r off, where the OS gives none).
func (r *residentSet) copy(w *weight, p *pool) *residentCopy {
	c := &residentCopy{}
	c.packed = place(r, p, w.packed)
	if w.scalesH != nil {
		c.scalesH, c.biasesH = place(r, p, w.scalesH), place(r, p, w.biasesH)
	} else {
		c.scales, c.biases = place(r, p, w.scales), place(r, p, w.biases)
	}
	if r.off {
		return nil
	}
	return c
}

// place copies src into r's free space (64-byte aligned), taking a new
// region when it does not fit; with none to be had it sets r.off.
func place[E uint16 | uint32 | float32](r *residentSet, p *pool, src []E) []E {
	if r.off || len(src) == 0 {
		return src
	}
	size := len(src) * int(unsafe.Sizeof(src[0]))
	pad := (64 - int(uintptr(unsafe.Pointer(unsafe.SliceData(r.free))))%64) % 64
	if len(r.free) < pad+size {
		region, mapping := hugeRegion((size + residentChunk - 1) / residentChunk * residentChunk)
		if region == nil {
			r.off = true
			return src
		}
		r.maps = append(r.maps, mapping)
		r.free, pad = region, 0
	}
	dst := unsafe.Slice((*E)(unsafe.Pointer(&r.free[pad])), len(src))
	p.run(len(src), 1<<18, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	pageOut(unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), size))
	r.free = r.free[pad+size:]
	r.bytes += int64(pad + size)
	return dst
}

// size is the memory r holds.
func (r *residentSet) size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

// release returns the regions to the OS; the Backend must not run ops
// after it (Close).
func (r *residentSet) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.maps {
		freeRegion(m)
	}
	r.maps, r.free, r.copies, r.off, r.bytes = nil, nil, nil, true, 0
}
