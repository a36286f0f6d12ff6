package server

import (
	"context"
	"errors"
	"net/http"

	"perch/app/contextfit"
	"perch/engine"
)

// fitContext applies Perch's context policy when the request asked for it
// ("truncation": "auto"): the oldest turns leave, attachments first, until
// the prompt fits with room to answer. Without it a full context is refused.
func (s *Server) fitContext(ctx context.Context, gen engine.Generator, call *chatCall) error {
	if !call.truncate {
		return nil
	}
	m, ok := gen.(contextfit.Measurer)
	if !ok {
		return nil // the engine refuses a full context itself
	}
	req, cut, _, err := contextfit.Fit(ctx, m, call.req, contextfit.Cut{})
	if err != nil {
		return err
	}
	if cut.Trimmed() {
		s.logf("truncation: left out %d message(s) and the attachments of %d more", cut.From, cut.MediaFrom-cut.From)
	}
	call.req = req
	return nil
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
