package engine

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"perch/engine/gemma4"
	"perch/engine/gemma4/processor"
	"perch/engine/grammar"
	"perch/engine/kvcache"
	"perch/engine/sample"
	"perch/engine/tensor"
)

// job is one prepared request.
type job struct {
	ctx      context.Context
	req      Request
	prompt   []int32
	prep     *processor.Prepared
	params   sample.Params
	maxTok   int
	events   chan Event
	position int
	start    time.Time
	control  func(tensor.Backend) // set for engine-thread chores instead of a generation
	release  func()               // frees the job's context
	adapter  *requestAdapter      // LoRA adapter of the request, nil for the base model
	// constraint, when set, is the grammar the answer follows.
	constraint *grammar.Constraint
}

// send delivers an event unless the caller has gone away.
// An event goes out whenever the channel has room, even after a cancel, so
// the final Done (stop reason "cancelled") reaches a caller still reading.
func (j *job) send(ev Event) bool {
	select {
	case j.events <- ev:
		return true
	default:
	}
	select {
	case j.events <- ev:
		return true
	case <-j.ctx.Done():
		return false
	}
}

// end closes the events, lets go of the job's context and runs the
// request's done hook.
func (j *job) end() {
	close(j.events)
	if j.release != nil {
		j.release()
	}
	if j.req.OnDone != nil {
		j.req.OnDone()
	}
}

// fail ends the job with an error event.
func (j *job) fail(err error) {
	j.send(Event{Kind: EventError, Err: err})
	j.end()
}

// prepare does everything that needs no native work: prompt ids, sampling
// settings, limits. Errors here reach the caller before anything is queued.
func (e *Engine) prepare(ctx context.Context, req Request) (*job, error) {
	params, err := e.samplingParams(req.Sampling) // cheap checks before the expensive work
	if err != nil {
		return nil, err
	}
	cons, err := e.compileConstraint(req)
	if err != nil {
		return nil, err
	}
	var adapter *requestAdapter
	if dir := cmp.Or(req.Adapter, e.opts.Adapter); dir != "" {
		if adapter, err = e.adapters.load(dir, e.model.Text); err != nil {
			return nil, err
		}
	}
	tools, err := templateTools(req.Tools, req.ToolChoice)
	if err != nil {
		return nil, err
	}
	ctxLen := e.info.ContextLength
	opts := processor.PrepareOptions{
		PromptIDs: req.PromptIDs, EnableThinking: req.EnableThinking, ImageTokens: req.MaxSoftTokens,
		VideoFPS: req.VideoFPS, MaxFrames: req.MaxFrames, NoVideoAudio: req.NoVideoAudio, Context: ctxLen,
		Tools: tools,
	}
	if req.Fit != nil && len(req.PromptIDs) > 0 {
		req.Fit = nil
	}
	if req.Fit != nil {
		opts.Context = 0 // measured, not refused, while the policy fits it
	}
	var prep *processor.Prepared
	for {
		if prep, err = e.proc.Prepare(ctx, req.Messages, opts); err != nil {
			return nil, err
		}
		if req.Fit == nil {
			break
		}
		m := Measure{Tokens: len(prep.IDs), Context: ctxLen, Messages: e.turnSizes(prep, len(req.Messages))}
		next, done, err := req.Fit.Fit(req.Messages, m)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		req.Messages = next
	}
	if len(prep.IDs) >= ctxLen {
		return nil, &ContextError{Prompt: len(prep.IDs), Context: ctxLen}
	}
	prompt := prep.IDs
	maxTok := req.MaxTokens
	if maxTok <= 0 {
		maxTok = e.opts.MaxTokens
	}
	if room := ctxLen - len(prompt); maxTok > room {
		maxTok = room
	}
	if err := e.checkKV(len(prompt) + maxTok); err != nil {
		return nil, err
	}
	// The job stops when its caller cancels or when the engine closes.
	jctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.life, cancel)
	return &job{ctx: jctx, release: func() { stop(); cancel() }, req: req, prompt: prompt, prep: prep,
		params: params, maxTok: maxTok, events: make(chan Event, 64), start: time.Now(), adapter: adapter,
		constraint: cons}, nil
}

// samplingParams merges request overrides onto generation_config defaults
// (Gemma-4 ships 1.0 / 0.95 / 64); without a config, greedy.
func (e *Engine) samplingParams(s Sampling) (sample.Params, error) {
	p := samplingDefaults(e.gen)
	p.Seed = uint64(time.Now().UnixNano())
	p = s.Over(p)
	return p, p.Validate(e.cfg.Text.VocabSize)
}

// run executes a job on the engine thread.
func (e *Engine) run(j *job) {
	b := e.b
	stats := &Stats{PromptTokens: len(j.prompt), Backend: b.Name(), PromptByKind: j.prep.ByKind}
	if j.ctx.Err() != nil {
		e.finish(j, stats, StopCancelled)
		return
	}
	b.ResetPeakMemory()
	if err := e.adapters.use(b, e.model.Text, j.adapter); err != nil {
		j.fail(err)
		return
	}
	defer e.adapters.use(b, e.model.Text, nil)
	idents := identities(j)
	caches, reused := e.sess.take(b, e.model.Text.NewCaches, idents, adapterID(j.adapter))
	stats.PrefixReused = reused
	kept := false
	defer func() {
		if !kept {
			release(b, caches)
		}
	}()

	t0 := time.Now()
	var embeds tensor.Tensor
	var err error
	if len(j.prep.Media) > 0 {
		if embeds, err = e.embeddings(j, stats, reused); err != nil {
			e.failOrCancel(j, stats, err)
			return
		}
	}
	logits, err := e.prefill(j, caches, embeds, reused)
	if err != nil {
		e.failOrCancel(j, stats, err)
		return
	}
	if j.req.DumpLogits != nil {
		v, err := b.Float32s(logits)
		if err != nil {
			j.fail(err)
			return
		}
		j.req.DumpLogits(v)
	}
	prefillTime := time.Since(t0)
	stats.PrefillTokS = float64(len(j.prompt)) / prefillTime.Seconds()
	reason, fed, err := e.decode(j, caches, logits, stats)
	if err != nil {
		j.fail(err)
		return
	}
	if reason != StopCancelled {
		for _, id := range stats.TokenIDs[:fed] {
			idents = append(idents, ident{id: id})
		}
		e.sess.keep(b, caches, idents, adapterID(j.adapter))
		kept = true
	}
	e.finish(j, stats, reason)
}

// failOrCancel ends a job that stopped early: cancelled, or an error.
func (e *Engine) failOrCancel(j *job, stats *Stats, err error) {
	if err == context.Canceled || err == context.DeadlineExceeded {
		e.finish(j, stats, StopCancelled)
		return
	}
	j.fail(err)
}

func (e *Engine) finish(j *job, stats *Stats, reason string) {
	stats.PeakMemory = e.b.PeakMemory()
	j.send(Event{Kind: EventDone, Stats: stats, StopReason: reason})
	j.end()
}

// prefill feeds the prompt in chunks, checking for cancellation between
// them, and returns the last position's logits.
func (e *Engine) prefill(j *job, caches []kvcache.Cache, embeds tensor.Tensor, from int) (tensor.Tensor, error) {
	b, text := e.b, e.model.Text
	chunk := e.opts.PrefillChunk
	if chunk <= 0 {
		chunk = e.rt.PrefillChunk
	}
	// The vision overlay (image blocks attend both ways) needs each block in
	// one pass; like mlx-vlm, such prompts are prefilled whole.
	var blocks []int
	if text.Cfg.UseBidirectionalAttention == "vision" && j.prep.Blocks != nil {
		chunk, blocks = len(j.prompt), j.prep.Blocks
	}
	var logits tensor.Tensor
	for start := from; start < len(j.prompt); start += chunk {
		if err := j.ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+chunk, len(j.prompt))
		in := gemma4.Inputs{IDs: b.FromInt32(j.prompt[start:end], []int{1, end - start}), LastOnly: true}
		if blocks != nil {
			in.VisionBlocks = blocks[start:end]
		}
		if embeds != nil {
			in.Embeds = b.Slice(embeds, 1, start, end)
			in.PLEIDs = b.FromInt32(j.prep.PLEIDs[start:end], []int{1, end - start})
		}
		logits = text.Forward(in, caches)
		keep := append(kvcache.States(caches), logits)
		if err := b.Eval(keep...); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		b.Sweep(append(kvcache.States(caches), logits, embeds)...)
		if !j.send(Event{Kind: EventProgress, Stage: StagePrefill, Fraction: float64(end-from) / float64(len(j.prompt)-from)}) {
			return nil, j.ctx.Err()
		}
	}
	return logits, nil
}
