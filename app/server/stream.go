package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"perch/engine"
)

// sse writes OpenAI's chat.completion.chunk events. The envelope around
// the delta is built once; each token costs one string escape, one write
// and one flush.
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	prefix []byte // `data: {"id":…,"choices":[{"index":0,"delta":`
	open   []byte // `,"logprobs":null,"finish_reason":null}]` + usage null + `}` + "\n\n"
	buf    []byte
	failed bool // the client is gone; keep draining, stop writing
}

func newSSE(w http.ResponseWriter, c *completion) *sse {
	model, _ := json.Marshal(c.model)
	prefix := `data: {"id":"` + c.id + `","object":"chat.completion.chunk","created":` + strconv.FormatInt(c.created, 10) +
		`,"model":` + string(model) + `,"system_fingerprint":null,"choices":[{"index":0,"delta":`
	usageNull := ""
	if c.includeUsage {
		usageNull = `,"usage":null`
	}
	return &sse{
		w: w, rc: http.NewResponseController(w),
		prefix: []byte(prefix),
		open:   []byte(`,"logprobs":null,"finish_reason":null}]` + usageNull + "}\n\n"),
		buf:    make([]byte, 0, 512),
	}
}

func (s *sse) send(b []byte) {
	if s.failed {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.failed = true
		return
	}
	if err := s.rc.Flush(); err != nil {
		s.failed = true
	}
}

// delta sends one chunk whose delta sets key to text.
func (s *sse) delta(key, text string) {
	q, _ := json.Marshal(text)
	b := append(s.buf[:0], s.prefix...)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, q...)
	b = append(b, '}')
	b = append(b, s.open...)
	s.buf = b
	s.send(b)
}

func (s *sse) event(v any) {
	b, _ := json.Marshal(v)
	s.send(append(append([]byte("data: "), b...), "\n\n"...))
}

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint *string       `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
}

// stream answers with server-sent events: a role chunk, one chunk per
// token delta, a chunk with finish_reason, the usage chunk when asked for,
// then "data: [DONE]". A client that goes away cancels r's context, which
// cancels the generation; the events are drained either way.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, c *completion, events <-chan engine.Event) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := newSSE(w, c)
	out.send(append(append(out.prefix[:len(out.prefix):len(out.prefix)], `{"role":"assistant","content":""}`...), out.open...))
	base := chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model}
	calls := 0
	a := engine.Collect(events, func(ev engine.Event, a *engine.Collector) {
		if ev.Kind == engine.EventToolCall && !a.Done {
			out.toolCall(calls, ev.Call)
			calls++
			return
		}
		if ev.Kind != engine.EventToken || ev.Token.Text == "" || a.Done {
			return
		}
		if ev.Token.Thinking {
			out.delta("reasoning_content", ev.Token.Text)
		} else {
			out.delta("content", ev.Token.Text)
		}
	})
	switch {
	case a.Err != nil:
		out.event(errorBody("server_error", "", "", c.failed(a.Err)))
	case a.Cancelled() || r.Context().Err() != nil:
		c.outcome = "cancelled by the client"
		return
	default:
		reason := finishReason(a.StopReason)
		c.outcome = reason
		last := base
		last.Choices = []chunkChoice{{Delta: map[string]any{}, FinishReason: &reason}}
		out.event(withUsageNull(last, c.includeUsage))
		if c.includeUsage {
			u := usageOf(a.Stats)
			final := base
			final.Choices = []chunkChoice{}
			final.Usage = &u
			out.event(final)
		}
	}
	out.send([]byte("data: [DONE]\n\n"))
}

// withUsageNull adds OpenAI's "usage": null to a chunk when usage is on.
func withUsageNull(ch chunk, on bool) any {
	if !on {
		return ch
	}
	return struct {
		chunk
		Usage *usage `json:"usage"`
	}{chunk: ch}
}
