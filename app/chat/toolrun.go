package chat

import (
	"context"
	"errors"
	"time"

	"perch/app/contextfit"
	"perch/app/history"
	"perch/app/mcphost"
	"perch/app/toolloop"
	"perch/engine"
	"perch/ui"
)

// runTools answers with tools offered: toolloop runs the rounds, each
// call shows as a card in the answer (asking the user unless they always
// allow that tool), and the rounds are saved with the answer as they go,
// each call before it runs. Esc (ctx) stops it at any point.
func (s *Service) runTools(ctx context.Context, convID string, a *history.Message, st *ui.Stream, first Lent,
	req engine.Request, fitted func() *ui.ContextView, offered []toolloop.Offered,
	save func(history.State), finish func(history.State, *engine.Stats, error)) {
	t := &toolRun{a: a, round: -1}
	var stats *engine.Stats
	lastSave := time.Now()
	publish := func() {
		a.Text, a.Thinking = t.text.String(), t.thinking.String()
		st.Publish(ui.Answer{Text: a.Text, Thinking: a.Thinking, View: fitted(), Tools: t.calls()})
	}
	saveNow := func() {
		a.Text, a.Thinking = t.text.String(), t.thinking.String()
		save(history.Streaming)
		lastSave = time.Now()
	}
	gate := &mcphost.Gate{Policy: mcphost.Ask, Store: s.MCP.Approvals(),
		Ask: func(ctx context.Context, r mcphost.Request) (mcphost.Decision, error) {
			answers := make(chan ui.ToolAnswer, 1)
			t.ask = func(d ui.ToolAnswer) {
				select {
				case answers <- d:
				default: // answered already
				}
			}
			publish()
			defer func() { t.ask = nil }()
			select {
			case d := <-answers:
				return decision(d), nil
			case <-ctx.Done():
				return mcphost.Deny, ctx.Err()
			}
		}}
	l := &toolloop.Loop{Gen: &roundGen{s: s, convID: convID, first: first}, Tools: offered, Host: s.MCP, Gate: gate,
		MaxRounds: s.settings().ToolRounds,
		OnEvent: func(ev toolloop.Event) {
			switch ev.Kind {
			case toolloop.Generation:
				switch e := ev.Engine; e.Kind {
				case engine.EventToken:
					if e.Token.Thinking {
						t.thinking.WriteString(e.Token.Text)
					} else {
						t.text.WriteString(e.Token.Text)
					}
				case engine.EventDone:
					stats = addStats(stats, e.Stats)
				}
				publish()
				if time.Since(lastSave) >= s.SaveEvery {
					saveNow()
				}
			case toolloop.Call:
				t.call(ev)
				saveNow() // on record before it may run
				publish()
			case toolloop.Result:
				t.result(ev)
				saveNow()
				publish()
			}
		}}
	req.ToolChoice = s.ToolChoice
	_, err := l.Run(ctx, req)
	a.Text, a.Thinking = t.text.String(), t.thinking.String()
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
		finish(history.Stopped, nil, nil)
	case err != nil:
		finish(history.Failed, nil, err)
	default:
		finish(history.Done, stats, nil)
	}
}

// addStats sums an answer's rounds: generated tokens add up; the
// first-token time and speed stay the first round's; the prompt is the
// last round's (the whole conversation by then).
func addStats(sum, round *engine.Stats) *engine.Stats {
	if round == nil {
		return sum
	}
	if sum == nil {
		c := *round
		return &c
	}
	sum.GeneratedTokens += round.GeneratedTokens
	sum.PromptTokens = round.PromptTokens
	return sum
}

// roundGen lends each round of a tool answer the model: the first round
// the model the answer was given (its request already fitted to the
// context), later ones the model acquired again, their requests fitted
// the same way.
type roundGen struct {
	s      *Service
	convID string
	first  Lent
	used   bool
}

func (g *roundGen) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	lent := g.first
	if g.used {
		var err error
		if lent, err = g.s.models.Acquire(ctx, nil); err != nil {
			return nil, err
		}
		req.Fit = nil // the first round's policy records the first round's cut
		if g.s.trimAllowed(g.convID) {
			_, req = contextfit.NewPolicy(req, contextfit.Cut{})
		}
	}
	g.used = true
	if g.s.Seed != nil {
		req.Sampling.Seed = g.s.Seed
	}
	return lent.Generate(ctx, req)
}
