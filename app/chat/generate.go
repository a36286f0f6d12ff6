package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"perch/app/history"
	"perch/app/toolloop"
	"perch/engine"
	"perch/ui"
)

// Send stores the user turn (durably, before anything else) and streams the answer.
func (s *Service) Send(ctx context.Context, convID, text string, atts []ui.Attachment) (ui.Reply, error) {
	text = strings.TrimSpace(text)
	if text == "" && len(atts) == 0 {
		return ui.Reply{}, errors.New("type a message or attach a file first")
	}
	state := s.models.State()
	if !state.Ready() {
		return ui.Reply{}, errNoModel(state)
	}
	for _, a := range atts {
		if err := canTake(state, a.Kind, a.Name); err != nil {
			return ui.Reply{}, err
		}
	}
	if convID == "" {
		c, err := s.store.CreateConversation(titleFor(text, atts), state.ID)
		if err != nil {
			return ui.Reply{}, err
		}
		convID = c.ID
		if err := s.takeNextChoice(convID); err != nil {
			return ui.Reply{}, err
		}
	}
	u := history.Message{ConversationID: convID, Role: "user", Text: text, State: history.Done}
	for _, a := range atts {
		u.Attachments = append(u.Attachments, history.Attachment{SHA256: a.ID, Name: a.Name, Kind: string(a.Kind)})
	}
	if err := s.store.Append(&u); err != nil {
		return ui.Reply{}, fmt.Errorf("could not save your message: %w", err)
	}
	r, err := s.answer(ctx, convID)
	if err != nil {
		return ui.Reply{}, err
	}
	saved, err := s.store.Messages(convID)
	if err == nil {
		for _, m := range saved {
			if m.ID == u.ID {
				u = m // with attachment metadata
			}
		}
	}
	r.User = toUI(u)
	return r, nil
}

// Regenerate answers again in place of answer answerID: what followed it
// goes, and the answer keeps its earlier text as a version (◀ ▶).
func (s *Service) Regenerate(ctx context.Context, convID, answerID string) (ui.Reply, error) {
	ms, err := s.store.Messages(convID)
	if err != nil {
		return ui.Reply{}, err
	}
	m, ok := find(ms, answerID)
	if !ok || m.Role != "assistant" {
		return ui.Reply{}, errors.New("that answer is no longer in this conversation")
	}
	if err := s.store.TruncateAfter(convID, m.Seq); err != nil {
		return ui.Reply{}, err
	}
	a := m
	a.Text, a.Thinking, a.State, a.Error, a.Origin, a.Tools = "", "", history.Streaming, "", "", nil
	a.Model, a.Stats, a.View = s.models.State().Name, history.Stats{}, history.View{}
	if m.State == history.Failed || strings.TrimSpace(m.Text) == "" {
		err = s.store.Update(&a) // nothing worth keeping: try again in place
	} else {
		err = s.store.NewVersion(&a)
	}
	if err != nil {
		return ui.Reply{}, fmt.Errorf("could not save the answer: %w", err)
	}
	return s.start(ctx, convID, a), nil
}

// UseVersion implements ui.Chat.
func (s *Service) UseVersion(convID, answerID string, n int) (ui.Message, error) {
	if err := s.store.UseVersion(answerID, n); err != nil {
		return ui.Message{}, err
	}
	ms, err := s.store.Messages(convID)
	if err != nil {
		return ui.Message{}, err
	}
	m, ok := find(ms, answerID)
	if !ok {
		return ui.Message{}, errors.New("that answer is no longer in this conversation")
	}
	u := toUI(m)
	u.View = viewToUI(m.View, ms)
	return u, nil
}

// Edit replaces user turn userID with text, drops what followed, and answers again.
func (s *Service) Edit(ctx context.Context, convID, userID, text string) (ui.Reply, error) {
	text = strings.TrimSpace(text)
	ms, err := s.store.Messages(convID)
	if err != nil {
		return ui.Reply{}, err
	}
	m, ok := find(ms, userID)
	if !ok || m.Role != "user" {
		return ui.Reply{}, errors.New("that message is no longer in this conversation")
	}
	if text == "" && len(m.Attachments) == 0 {
		return ui.Reply{}, errors.New("the message is empty")
	}
	// Append the edited turn before removing the old one, so a crash in
	// between leaves both rather than neither.
	u := history.Message{ConversationID: convID, Role: "user", Text: text, State: history.Done, Attachments: m.Attachments}
	if err := s.store.Append(&u); err != nil {
		return ui.Reply{}, fmt.Errorf("could not save your message: %w", err)
	}
	if err := s.store.DeleteRange(convID, m.Seq, u.Seq-1); err != nil {
		return ui.Reply{}, err
	}
	r, err := s.answer(ctx, convID)
	if err != nil {
		return ui.Reply{}, err
	}
	r.User = toUI(u)
	return r, nil
}

func find(ms []history.Message, id string) (history.Message, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return history.Message{}, false
}

// answer saves an empty streaming answer at the end of the conversation and
// starts generating it.
func (s *Service) answer(ctx context.Context, convID string) (ui.Reply, error) {
	state := s.models.State()
	a := history.Message{ConversationID: convID, Role: "assistant", State: history.Streaming, Model: state.Name + s.adapterSuffix(convID)}
	if err := s.store.Append(&a); err != nil {
		return ui.Reply{}, fmt.Errorf("could not save the answer: %w", err)
	}
	return s.start(ctx, convID, a), nil
}

// start generates the saved, streaming answer a.
func (s *Service) start(ctx context.Context, convID string, a history.Message) ui.Reply {
	st := ui.NewStream()
	go s.run(ctx, convID, a, st)
	return ui.Reply{ConversationID: convID, Assistant: toUI(a), Stream: st}
}

// run generates answer a, publishing it to st and saving it as it goes.
// The last answer published has Done set.
func (s *Service) run(ctx context.Context, convID string, a history.Message, st *ui.Stream) {
	done := false
	defer func() {
		// A bug here must not take the app down: it becomes this answer's error.
		if p := recover(); p != nil && !done {
			a.State, a.Error = history.Failed, fmt.Sprintf("Perch hit an internal error (%v). Try again; if it keeps happening, please report it.", p)
			s.store.Update(&a)
			st.Publish(ui.Answer{Text: a.Text, Thinking: a.Thinking, Done: true, State: ui.Failed, Err: errors.New(a.Error)})
		}
	}()
	var c *engine.Collector
	var view *ui.ContextView // what the model sees, once the context policy has run
	lastSave := time.Now()
	save := func(state history.State) {
		if c != nil {
			a.Text, a.Thinking = c.Text(), c.Thinking()
		}
		a.State = state
		s.store.Update(&a)
		lastSave = time.Now()
	}
	finish := func(state history.State, stats *engine.Stats, err error) {
		d := ui.Answer{Done: true, State: ui.MessageState(state), View: view}
		if stats != nil {
			a.Stats = history.Stats{PromptTokens: stats.PromptTokens, GeneratedTokens: stats.GeneratedTokens,
				TimeToFirst: stats.TimeToFirst, TokensPerSec: stats.DecodeTokS}
			d.Stats = &ui.Stats{PromptTokens: stats.PromptTokens, GeneratedTokens: stats.GeneratedTokens,
				TokensPerSec: stats.DecodeTokS, TimeToFirst: stats.TimeToFirst}
		}
		if err != nil {
			summary, details := friendly(err)
			a.Error = history.JoinError(summary, details)
			d.Err = streamError(err, summary, details)
		}
		save(state)
		d.Text, d.Thinking, d.Tools = a.Text, a.Thinking, toolsToUI(a.Tools)
		done = true
		st.Publish(d)
	}
	start := time.Now()
	status := func(msg string) { st.Publish(ui.Answer{Status: msg}) }
	cr, err := s.request(convID, a.ID)
	var offered []toolloop.Offered
	if err == nil && s.MCP != nil {
		offered = s.offered(ctx, convID, status)
		for _, o := range offered {
			cr.req.Tools = append(cr.req.Tools, o.Engine) // measured with the prompt
		}
	}
	var gen Lent
	if err == nil {
		gen, err = s.models.Acquire(ctx, status)
	}
	var req engine.Request
	var fitted func() *ui.ContextView
	if err == nil {
		req, fitted = s.fitContext(convID, cr, &a)
	}
	if err == nil && len(offered) > 0 {
		s.runTools(ctx, convID, &a, st, gen, req, fitted, offered, save, func(state history.State, stats *engine.Stats, err error) {
			view = fitted() // the first round's cut
			finish(state, stats, err)
		})
		return
	}
	if err == nil {
		if s.Seed != nil {
			req.Sampling.Seed = s.Seed
		}
		var events <-chan engine.Event
		events, err = gen.Generate(ctx, req) // prepares the prompt once, the context policy applied
		if err == nil {
			view = fitted()
			c = engine.Collect(events, func(ev engine.Event, c *engine.Collector) {
				if c.Done {
					return
				}
				st.Publish(ui.Answer{Text: c.Text(), Thinking: c.Thinking(), Status: c.Status(), View: view})
				if ev.Kind == engine.EventToken && time.Since(lastSave) >= s.SaveEvery {
					save(history.Streaming)
				}
			})
			s.ended(ctx, c, finish, start)
			return
		}
	}
	if ctx.Err() != nil {
		finish(history.Stopped, nil, nil)
		return
	}
	finish(history.Failed, nil, err)
}

// ended saves and publishes how a collected answer ended.
func (s *Service) ended(ctx context.Context, c *engine.Collector, finish func(history.State, *engine.Stats, error), start time.Time) {
	switch {
	case c.Err != nil && (ctx.Err() != nil || errors.Is(c.Err, context.Canceled)):
		finish(history.Stopped, nil, nil)
	case c.Err != nil:
		finish(history.Failed, nil, c.Err)
	default:
		state := history.Done
		if c.Cancelled() || ctx.Err() != nil {
			state = history.Stopped
		}
		if st := c.Stats; st != nil && st.DecodeTokS == 0 && st.GeneratedTokens > 0 {
			if el := time.Since(start) - st.TimeToFirst; el > 0 {
				st.DecodeTokS = float64(st.GeneratedTokens) / el.Seconds()
			}
		}
		finish(state, c.Stats, nil)
	}
}

// request builds the engine request for the conversation up to (not
// including) the answer being generated.
func (s *Service) request(convID, answerID string) (convRequest, error) {
	st := s.settings()
	ms, err := s.store.Messages(convID)
	if err != nil {
		return convRequest{}, err
	}
	// Only what the user set goes; the rest is the model's own default.
	cr := convRequest{req: engine.Request{
		Sampling:       st.Sampling,
		MaxTokens:      orZero(st.MaxTokens),
		EnableThinking: st.Thinking,
		MaxSoftTokens:  orZero(st.ImageTokens),
		VideoFPS:       orZero(st.VideoFPS),
		MaxFrames:      orZero(st.MaxFrames),
		Adapter:        s.adapterFolder(convID),
	}}
	if st.SystemPrompt != "" {
		cr.req.Messages = append(cr.req.Messages, engine.Text(engine.RoleSystem, st.SystemPrompt))
		cr.sys = 1
	}
	for _, m := range ms {
		if m.ID == answerID {
			break
		}
		if m.Role == "assistant" && strings.TrimSpace(m.Text) == "" && len(m.Tools) == 0 {
			continue // a failed or empty answer says nothing to the model
		}
		if m.Role == "assistant" {
			cr.hint = m.View
		}
		for _, tm := range toolTurns(m.Tools) {
			cr.req.Messages = append(cr.req.Messages, tm)
			cr.seqs = append(cr.seqs, m.Seq)
			cr.ids = append(cr.ids, m.ID)
		}
		if m.Role == "assistant" && strings.TrimSpace(m.Text) == "" {
			continue // it called tools and was cut short before answering
		}
		em := engine.Message{Role: engine.Role(m.Role), Thinking: m.Thinking}
		for _, a := range m.Attachments {
			data, err := s.readAttachment(a.SHA256)
			if err != nil {
				return convRequest{}, fmt.Errorf("%s: %w", a.Name, err)
			}
			em.Content = append(em.Content, engine.Part{Type: engine.PartType(a.Kind), Data: data, Name: a.Name, Hash: a.SHA256})
		}
		if m.Text != "" {
			em.Content = append(em.Content, engine.Part{Type: engine.PartText, Text: m.Text})
		}
		cr.req.Messages = append(cr.req.Messages, em)
		cr.seqs = append(cr.seqs, m.Seq)
		cr.ids = append(cr.ids, m.ID)
	}
	return cr, nil
}
