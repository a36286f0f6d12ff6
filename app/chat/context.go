package chat

import (
	"errors"
	"fmt"
	"strings"

	"perch/app/contextfit"
	"perch/app/history"
	"perch/engine"
	"perch/ui"
)

// convRequest is a conversation as an engine request, with what the
// context policy needs to map its messages back to the history.
type convRequest struct {
	req  engine.Request
	sys  int          // leading system messages
	seqs []int        // history seq of each message after the system ones
	ids  []string     // and its id
	hint history.View // what the model saw for the previous answer
}

// contextFullText opens the error of a conversation that no longer fits
// when the user has not agreed to leave old turns out (the chat offers to).
const contextFullText = "This chat is now longer than the model can read at once"

// fitContext sets the context policy on the request: with consent (the
// setting, or the user's answer for this conversation) the engine leaves
// the oldest turns out of the model's view as it prepares the prompt, so
// it fits; without it, the request goes as is and a full context fails
// the answer with an offer to trim. Once Generate has prepared the request,
// fitted records in a what was left out and gives the view to show.
func (s *Service) fitContext(convID string, cr convRequest, a *history.Message) (req engine.Request, fitted func() *ui.ContextView) {
	a.View = history.View{}
	if !s.trimAllowed(convID) {
		return cr.req, func() *ui.ContextView { return nil }
	}
	policy, req := contextfit.NewPolicy(cr.req, cr.cut(cr.hint))
	return req, func() *ui.ContextView {
		cut := policy.Cut()
		if !cut.Trimmed() {
			return nil
		}
		a.View = cr.view(cut)
		return &ui.ContextView{FromID: cr.id(cut.From), MediaFromID: cr.id(cut.MediaFrom)}
	}
}

func (s *Service) trimAllowed(convID string) bool {
	if s.settings().ContextPolicy != ui.AskFirst {
		return true
	}
	c, err := s.store.Conversation(convID)
	return err == nil && c.TrimOK
}

// AllowTrim implements ui.Chat.
func (s *Service) AllowTrim(convID string) error { return s.store.SetTrimOK(convID, true) }

// cut is the history view v as indexes of the request's conversation.
func (cr convRequest) cut(v history.View) contextfit.Cut {
	index := func(seq int) int {
		if seq == 0 {
			return 0
		}
		for i, s := range cr.seqs {
			if s >= seq {
				return i
			}
		}
		return len(cr.seqs)
	}
	return contextfit.Cut{From: index(v.From), MediaFrom: index(v.MediaFrom)}
}

// view is cut as history seqs (0: nothing left out on that count).
func (cr convRequest) view(c contextfit.Cut) history.View {
	seq := func(i int) int {
		if i <= 0 || i >= len(cr.seqs) {
			return 0
		}
		return cr.seqs[i]
	}
	return history.View{From: seq(c.From), MediaFrom: seq(c.MediaFrom)}
}

func (cr convRequest) id(i int) string {
	if i <= 0 || i >= len(cr.ids) {
		return ""
	}
	return cr.ids[i]
}

// viewToUI maps a stored view onto message ids of the conversation ms.
func viewToUI(v history.View, ms []history.Message) ui.ContextView {
	var out ui.ContextView
	for _, m := range ms {
		if v.From > 0 && out.FromID == "" && m.Seq >= v.From {
			out.FromID = m.ID
		}
		if v.MediaFrom > 0 && out.MediaFromID == "" && m.Seq >= v.MediaFrom {
			out.MediaFromID = m.ID
		}
	}
	return out
}

// streamError is how a failure reaches the chat: in words with its details,
// and for a conversation that no longer fits, an error the chat answers
// with an offer.
func streamError(err error, summary, details string) error {
	var ce *engine.ContextError
	if errors.As(err, &ce) {
		return &ui.ContextFullError{Msg: summary, Details: details}
	}
	return &ui.Problem{Summary: summary, Details: details}
}

// contextFull says, for a full context, how full and what to do.
func contextFull(ce *engine.ContextError) string {
	return fmt.Sprintf("%s (%d of %d tokens). Leave the oldest messages out of its view, or start a new chat.",
		contextFullText, ce.Prompt, ce.Context)
}

func isContextFull(errText string) bool { return strings.HasPrefix(errText, contextFullText) }
