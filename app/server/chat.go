package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"perch/app/contextfit"
	"perch/engine"
	"perch/media/fetch"
)

func itoa(n int) string { return strconv.Itoa(n) }

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	gen, m := s.current()
	status := "ok"
	if gen == nil {
		status = "no model loaded"
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status, "model": m.ID})
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelObjects are the loaded model and its adapters, as /v1/models lists them.
func (s *Server) modelObjects() []modelObject {
	gen, m := s.current()
	if gen == nil || m.ID == "" {
		return nil
	}
	var out []modelObject
	for _, id := range s.offer(m).ids() {
		out = append(out, modelObject{ID: id, Object: "model", Created: m.Created.Unix(), OwnedBy: "perch"})
	}
	return out
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list", Data: []modelObject{}}
	list.Data = append(list.Data, s.modelObjects()...)
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	for _, m := range s.modelObjects() {
		if m.ID == r.PathValue("id") {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	writeError(w, http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
		fmt.Sprintf("model %q is not loaded", truncate(r.PathValue("id"), 100)))
}

// maxInlineMedia caps one base64 input_audio part (the fetch guard caps URLs).
const maxInlineMedia = fetch.MaxImageAudioBytes

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	gen, model := s.current()
	if gen == nil {
		writeError(w, http.StatusServiceUnavailable, "server_error", "model", "model_not_loaded", "no model is loaded")
		return
	}
	// Limits before work: a full set of requests being prepared answers
	// busy before this one's body is read.
	select {
	case s.preparing <- struct{}{}:
	default:
		s.busy(w)
		return
	}
	prepared := false
	done := func() {
		if !prepared {
			prepared = true
			<-s.preparing
		}
	}
	defer done()
	body, err := readBody(r, s.opts.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", "request_too_large",
				fmt.Sprintf("the request body is over the %d-byte limit; send large media by URL", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "reading the request body failed")
		return
	}
	call, err := parseChatRequest(body, maxInlineMedia)
	if err != nil {
		s.badRequest(w, err)
		return
	}
	if err := checkModalities(call, model); err != nil {
		s.badRequest(w, err)
		return
	}
	answeredAs, adapter, err := s.offer(model).resolve(call.model)
	if err != nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "model", "model_not_found", err.Error())
		return
	}
	call.req.Adapter = adapter
	if err := s.fetchMedia(r.Context(), call); err != nil {
		s.badRequest(w, err)
		return
	}
	start := time.Now()
	logCut := s.fitContext(call)
	events, err := gen.Generate(r.Context(), call.req)
	done()
	var full *engine.ContextError
	var tooLong *contextfit.TooLongError
	switch {
	case errors.As(err, &full) || errors.As(err, &tooLong):
		s.contextError(w, err)
		return
	case errors.Is(err, engine.ErrBusy):
		s.busy(w)
		return
	case errors.Is(err, engine.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "model_not_loaded", "the model was unloaded")
		return
	case err != nil:
		s.badRequest(w, err)
		return
	}
	logCut()
	out := &completion{id: newID(), created: time.Now().Unix(), model: answeredAs, includeUsage: call.includeUsage}
	if call.stream {
		s.stream(w, r, out, events)
	} else {
		s.complete(w, out, events)
	}
	s.logf("chat %s: %s in %v", out.id, out.outcome, time.Since(start).Round(time.Millisecond))
}

// busy answers 429: the model's queue, or the requests being prepared, are full.
func (s *Server) busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", itoa(max(1, int(s.opts.RetryAfter/time.Second))))
	writeError(w, http.StatusTooManyRequests, "requests", "", "rate_limit_exceeded",
		"the model is busy: its request queue is full; retry shortly")
}

// readBody reads the whole body into one buffer of its declared size
// (no doubling copies for a large one); the body limit still applies.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= limit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(r.Body)
}

func (s *Server) badRequest(w http.ResponseWriter, err error) {
	param := ""
	var re *requestError
	if errors.As(err, &re) {
		param = re.param
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", param, "", err.Error())
}

// checkModalities refuses media the loaded model cannot take, instead of
// letting it be dropped silently.
func checkModalities(c *chatCall, m ModelInfo) error {
	for i, msg := range c.req.Messages {
		for _, p := range msg.Content {
			ok := true
			switch p.Type {
			case engine.PartImage:
				ok = m.Vision
			case engine.PartAudio:
				ok = m.Audio
			case engine.PartVideo:
				ok = m.Video
			}
			if !ok {
				return badParam(fmt.Sprintf("messages[%d].content", i), "model %s does not accept %s input", m.ID, p.Type)
			}
		}
	}
	return nil
}

// fetchMedia fills URL media parts through the fetch guard.
func (s *Server) fetchMedia(ctx context.Context, c *chatCall) error {
	for _, ref := range c.media {
		kind := fetch.Image
		switch ref.kind {
		case engine.PartAudio:
			kind = fetch.Audio
		case engine.PartVideo:
			kind = fetch.Video
		}
		data, err := s.fetcher.Fetch(ctx, ref.url, kind)
		if err != nil {
			return badParam(fmt.Sprintf("messages[%d].content[%d]", ref.msg, ref.part), "%s: %v", ref.kind, err)
		}
		part := &c.req.Messages[ref.msg].Content[ref.part]
		part.Data = data
		if !strings.HasPrefix(ref.url, "data:") {
			part.Name = truncate(ref.url, 200)
		}
	}
	return nil
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// completion is one answer being built.
type completion struct {
	id           string
	created      int64
	model        string
	includeUsage bool
	outcome      string
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(st *engine.Stats) usage {
	if st == nil {
		return usage{}
	}
	return usage{st.PromptTokens, st.GeneratedTokens, st.PromptTokens + st.GeneratedTokens}
}

func finishReason(stop string) string {
	switch stop {
	case engine.StopMaxTokens:
		return "length"
	case engine.StopToolCalls:
		return "tool_calls"
	}
	return "stop"
}

type message struct {
	Role             string           `json:"role"`
	Content          *string          `json:"content"` // null when the answer is only tool calls
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []map[string]any `json:"tool_calls,omitempty"`
}

type choice struct {
	Index        int       `json:"index"`
	Message      message   `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

type response struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	SystemFingerprint *string  `json:"system_fingerprint"`
	Choices           []choice `json:"choices"`
	Usage             usage    `json:"usage"`
}

// complete answers a non-streaming request once generation ends.
func (s *Server) complete(w http.ResponseWriter, c *completion, events <-chan engine.Event) {
	a := engine.Collect(events, nil)
	switch {
	case a.Err != nil:
		writeError(w, http.StatusInternalServerError, "server_error", "", "", c.failed(a.Err))
	case a.Cancelled():
		c.outcome = "cancelled by the client"
	default:
		c.outcome = finishReason(a.StopReason)
		msg := message{Role: "assistant", ReasoningContent: a.Thinking(), ToolCalls: wireCalls(a.Calls)}
		if text := a.Text(); text != "" || len(a.Calls) == 0 {
			msg.Content = &text
		}
		writeJSON(w, http.StatusOK, response{
			ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
			Choices: []choice{{Message: msg, FinishReason: finishReason(a.StopReason)}},
			Usage:   usageOf(a.Stats),
		})
	}
}

// failed records a generation's failure as the outcome and returns what
// the client is told.
func (c *completion) failed(err error) string {
	if errors.Is(err, engine.ErrNoResult) {
		c.outcome = "error: no result"
		return "generation ended without a result"
	}
	c.outcome = "error: " + errText(err)
	return "generation failed: " + errText(err)
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
