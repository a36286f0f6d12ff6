package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"perch/engine/chatoutput"
	"perch/engine/gemma4"
	"perch/engine/gemma4/processor"
	"perch/engine/gocpu"
	"perch/engine/tensor"
	"perch/engine/tokenizer"
	"perch/media/picture"
)

// Options configure an Engine.
type Options struct {
	Backend   string // auto, mlx or go
	QueueSize int    // requests waiting beyond the running one (default 8)
	// Preparing bounds the requests being prepared at once (attachments
	// decoded, template rendered, tokens counted) on their callers'
	// goroutines; one more is refused busy at once, like a full queue (default 4).
	Preparing    int
	PrefillChunk int // prompt tokens per prefill step (default 512 on Go, 2048 on MLX)
	MaxContext   int // cap on prompt+answer tokens (default: the model's, at most 32768)
	MaxTokens    int // default answer length when a request says 0 (default 2048)
	// EncoderCacheBytes bounds the cache of tower outputs (default 256 MiB).
	EncoderCacheBytes int64
	// MediaCacheBytes bounds the prepared attachments kept by content hash
	// (processor.Options; default 128 MiB).
	MediaCacheBytes int64
	// Pictures decodes images; share one with the chat's thumbnails so a
	// photo is decoded once (nil: the engine's own).
	Pictures *picture.Pool
	// MaxRequestPixels bounds one request's decoded image pixels (default 128 MP).
	MaxRequestPixels int64
	// MaxKVBytes is the memory the KV cache may take; a request that would
	// need more is refused up front (0: no limit).
	MaxKVBytes int64
	// WindowSlack is how many tokens sliding-window caches keep beyond the
	// window so a follow-up turn can reuse a cached conversation that
	// diverges up to that far back (default 1024; -1: none).
	WindowSlack int
	Threads     int // Go backend worker threads (0: all cores)
	// Exact keeps the Go backend on its exact float path. Without it, a
	// model whose rows are at least gocpu.IntMinWidth wide (every
	// published Gemma-4) runs the fast path: 4-bit weights meet int8
	// activations in prefill and in decode, which moves the next-token
	// distribution less than llama.cpp's Q8_0 activations move it on the
	// same model (gemma4's TestIntPrefillKL and TestIntDecodeKL). Training
	// always runs exact.
	Exact bool
	// IntPrefill and IntDecode turn one half of the fast path on whatever
	// Exact and the model say (benchmarks compare the halves).
	IntPrefill, IntDecode bool
	// Adapter is the LoRA adapter folder requests run with unless they
	// name their own (Request.Adapter); checked when the model loads.
	Adapter string
}

// ModelInfo describes the loaded model.
type ModelInfo struct {
	Name, Dir, Family string
	Vision, Audio     bool
	Video             bool
	ContextLength     int
	Backend           string
	Unknown           []string // checkpoint tensors the model does not use
}

// Engine owns one model on one backend, on one locked OS thread.
type Engine struct {
	opts  Options
	info  ModelInfo
	tok   *tokenizer.Tokenizer
	gen   *GenerationConfig
	stops map[int32]bool
	cfg   *gemma4.Config

	proc *processor.Processor

	queue     chan *job
	preparing chan struct{}   // a slot per request being prepared
	life      context.Context // cancelled by Close: every job stops promptly
	kill      context.CancelFunc
	pending   atomic.Int32 // queued, not yet started
	mu        sync.Mutex   // guards closed and sending on queue
	closed    bool
	stopped   chan struct{}

	// Owned by the worker goroutine.
	b        tensor.Backend
	model    *gemma4.Model
	encCache *encoderCache
	rt       gemma4.Runtime // KV element size and prefill chunk (the fit check's too)
	sess     session
	task     *task // the background task, nil when none (task.go)

	vocab    vocabulary  // grammar masks' token trie (constrain.go)
	adapters adapterSet  // LoRA adapters requests asked for (adapters.go)
	training atomic.Bool // a fine-tuning run holds the background-task slot (train_job.go)
}

// Open loads the model folder dir: tokenizer, template and configs on the
// caller's goroutine, weights on the engine thread.
func Open(dir string, opts Options) (*Engine, error) {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 8
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.Preparing <= 0 {
		opts.Preparing = 4
	}
	if opts.EncoderCacheBytes <= 0 {
		opts.EncoderCacheBytes = 256 << 20
	}
	switch {
	case opts.WindowSlack == 0:
		opts.WindowSlack = gemma4.DefaultWindowSlack
	case opts.WindowSlack < 0:
		opts.WindowSlack = 0
	}
	cfg, err := gemma4.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, err
	}
	gen, err := loadGenerationConfig(dir)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts: opts, tok: tok, gen: gen, cfg: cfg, stops: chatoutput.StopIDs(cfg.EOSTokenIDs, gen.EOS),
		queue: make(chan *job, opts.QueueSize), preparing: make(chan struct{}, opts.Preparing), stopped: make(chan struct{}),
	}
	e.life, e.kill = context.WithCancel(context.Background())
	e.proc, err = processor.New(dir, cfg, tok, processor.Options{
		MediaCacheBytes: opts.MediaCacheBytes, Pictures: opts.Pictures, MaxRequestPixels: opts.MaxRequestPixels})
	if err != nil {
		return nil, err
	}
	ctxLen := cfg.Text.MaxPositionEmbeddings
	if ctxLen <= 0 || ctxLen > 32768 {
		ctxLen = 32768
	}
	if opts.MaxContext > 0 && opts.MaxContext < ctxLen {
		ctxLen = opts.MaxContext
	}
	desc := gemma4.Describe(cfg, gemma4.Weights{})
	e.info = ModelInfo{
		Name: filepath.Base(filepath.Clean(dir)), Dir: dir, Family: desc.Name(),
		Vision: desc.Vision(), Audio: desc.Audio(), Video: desc.Video(), ContextLength: ctxLen,
	}
	ready := make(chan error, 1)
	go e.worker(dir, ready)
	if err := <-ready; err != nil {
		e.kill()
		return nil, err
	}
	if opts.Adapter != "" {
		if _, err := e.adapters.load(opts.Adapter, e.model.Text); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Info describes the loaded model.
func (e *Engine) Info() ModelInfo { return e.info }

// Tokenizer exposes the model's tokenizer (safe for concurrent use).
func (e *Engine) Tokenizer() *tokenizer.Tokenizer { return e.tok }

func (e *Engine) worker(dir string, ready chan<- error) {
	runtime.LockOSThread()
	defer close(e.stopped)
	// The int8 activations are measured good for models this wide (Exact).
	fast := !e.opts.Exact && e.cfg.Text.HiddenSize >= gocpu.IntMinWidth
	b, err := newBackend(e.opts.Backend, e.opts.Threads, e.opts.IntPrefill || fast, e.opts.IntDecode || fast)
	if err != nil {
		ready <- err
		return
	}
	m, err := gemma4.Load(b, dir)
	if err == nil {
		err = b.Eval()
	}
	if err != nil {
		b.Close()
		ready <- err
		return
	}
	b.Sweep()
	e.b, e.model = b, m
	m.Text.WindowSlack = e.opts.WindowSlack
	e.encCache = newEncoderCache(b, e.opts.EncoderCacheBytes)
	e.info.Backend = b.Name()
	e.rt = gemma4.RuntimeFor(b.Name(), m.Text.DType())
	e.info.Unknown = m.Unknown
	ready <- nil
	for e.work() {
	}
	e.adapters.free(m.Text)
	e.encCache.Clear()
	e.sess.drop(b)
	m.Close()
	b.Close()
}

// handle runs one job from the queue: a chore or a generation.
func (e *Engine) handle(j *job) {
	if j.control != nil {
		j.control(e.b)
		j.end()
		return
	}
	e.serve(j)
}

// serve runs one job, turning any panic into an error event.
func (e *Engine) serve(j *job) {
	defer func() {
		if r := recover(); r != nil {
			if err := e.b.Err(); err != nil { // a failed op left an empty tensor behind
				j.fail(err)
			} else {
				j.fail(fmt.Errorf("internal error: %v", r))
			}
		}
		e.b.ClearErr()
		e.b.Sweep()
	}()
	e.run(j)
}

// Close stops accepting work, cancels the running and queued requests (they
// end with stop reason "cancelled"), and frees the model and backend.
func (e *Engine) Close() error {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		e.kill()
		close(e.queue)
	}
	e.mu.Unlock()
	<-e.stopped
	return nil
}

// enqueue hands j to the worker or answers busy at once.
func (e *Engine) enqueue(j *job) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	j.position = int(e.pending.Add(1)) - 1
	j.send(Event{Kind: EventQueued, Position: j.position})
	select {
	case e.queue <- j:
		return nil
	default:
		e.pending.Add(-1)
		return ErrBusy
	}
}

// onEngine runs fn on the engine thread, after the requests queued before
// it (tests and diagnostics use it to read the backend's own state).
func (e *Engine) onEngine(fn func(b tensor.Backend)) error {
	j := &job{ctx: context.Background(), control: fn, events: make(chan Event, 1)}
	if err := e.enqueue(j); err != nil {
		return err
	}
	for range j.events {
	}
	return nil
}

// Generate implements Generator.
func (e *Engine) Generate(ctx context.Context, req Request) (<-chan Event, error) {
	refuse := func(err error) (<-chan Event, error) {
		if req.OnDone != nil {
			req.OnDone()
		}
		return nil, err
	}
	if ctx == nil {
		return refuse(errors.New("nil context"))
	}
	select {
	case e.preparing <- struct{}{}:
	default:
		return refuse(ErrBusy)
	}
	j, err := e.prepare(ctx, req)
	<-e.preparing
	if err != nil {
		return refuse(err)
	}
	if err := e.enqueue(j); err != nil {
		j.release()
		return refuse(err)
	}
	return j.events, nil
}
