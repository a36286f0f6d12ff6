package engine

import (
	"context"
	"perch/engine/gemma4/processor"
)

// Measure is how a request fills the model's context, counted exactly as
// Generate would build the prompt.
type Measure struct {
	Tokens  int // prompt tokens, media expanded
	Context int // prompt plus answer tokens the model takes at most
	// Messages has one entry per request message, in order: the tokens of
	// its turn and how many of those are media. Nil when the prompt's turns
	// cannot be matched to the messages (a template that merges turns).
	Messages []MessageSize
}

// MessageSize is one message's share of a prompt.
type MessageSize struct {
	Tokens int // the whole turn: role markers, text, media
	Media  int // soft tokens and their begin/end markers
}

// Measure prepares req as Generate would (media decoded, template rendered,
// placeholders expanded) and counts its prompt, without queueing anything.
// A prompt longer than the context is measured, not refused.
func (e *Engine) Measure(ctx context.Context, req Request) (Measure, error) {
	tools, err := templateTools(req.Tools, req.ToolChoice)
	if err != nil {
		return Measure{}, err
	}
	prep, err := e.proc.Prepare(ctx, req.Messages, processor.PrepareOptions{
		PromptIDs: req.PromptIDs, EnableThinking: req.EnableThinking, ImageTokens: req.MaxSoftTokens,
		VideoFPS: req.VideoFPS, MaxFrames: req.MaxFrames, NoVideoAudio: req.NoVideoAudio, Tools: tools,
	})
	if err != nil {
		return Measure{}, err
	}
	m := Measure{Tokens: len(prep.IDs), Context: e.info.ContextLength}
	if len(req.PromptIDs) == 0 {
		m.Messages = e.turnSizes(prep, len(req.Messages))
	}
	return m, nil
}

// turnSizes splits the prompt at its turn openers: one per message plus the
// generation prompt's, after any turns the template adds in front (a system
// turn for thinking).
func (e *Engine) turnSizes(prep *processor.Prepared, n int) []MessageSize {
	tok := e.proc.Tokenizer()
	opener, ok := tok.TokenID("<|turn>")
	if !ok {
		if opener, ok = tok.TokenID("<start_of_turn>"); !ok {
			return nil
		}
	}
	prompt := prep.IDs
	var starts []int
	for i, id := range prompt {
		if id == opener {
			starts = append(starts, i)
		}
	}
	if len(starts) < n+1 {
		return nil
	}
	starts = starts[len(starts)-n-1:]
	media := make([]bool, len(prompt))
	for _, pl := range prep.Media {
		for _, p := range pl.Rows {
			media[p] = true
		}
	}
	c := e.cfg
	for i, id := range prompt {
		switch id {
		case c.BOITokenID, c.EOITokenID, c.BOATokenID, c.EOATokenID:
			if id != 0 {
				media[i] = true
			}
		}
	}
	out := make([]MessageSize, n)
	for k := range out {
		out[k].Tokens = starts[k+1] - starts[k]
		for p := starts[k]; p < starts[k+1]; p++ {
			if media[p] {
				out[k].Media++
			}
		}
	}
	return out
}
