package server

import (
	"errors"
	"net/http"

	"perch/app/contextfit"
	"perch/engine"
)

// fitContext sets Perch's context policy on the request when it asked
// for it ("truncation": "auto"): the engine applies it inside its one
// Prepare, the oldest turns leaving, attachments first, until the prompt
// fits with room to answer. Without it a full context is refused. The
// function returned logs what was left out, once Generate has prepared.
func (s *Server) fitContext(call *chatCall) (logCut func()) {
	if !call.truncate {
		return func() {}
	}
	p, req := contextfit.NewPolicy(call.req, contextfit.Cut{})
	call.req = req
	return func() {
		if cut := p.Cut(); cut.Trimmed() {
			s.logf("truncation: left out %d message(s) and the attachments of %d more", cut.From, cut.MediaFrom-cut.From)
		}
	}
}

// contextError answers a prompt the context cannot hold as OpenAI does
// (400, code context_length_exceeded), and other failures as bad requests.
func (s *Server) contextError(w http.ResponseWriter, err error) {
	var full *engine.ContextError
	var tooLong *contextfit.TooLongError
	if errors.As(err, &full) || errors.As(err, &tooLong) {
		msg := err.Error()
		if full != nil {
			msg += ` (or send "truncation": "auto" to leave the oldest turns out)`
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", "context_length_exceeded", msg)
		return
	}
	s.badRequest(w, err)
}
