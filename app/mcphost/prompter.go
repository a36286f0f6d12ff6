package mcphost

import (
	"context"
	"sync"
)

// Card is a call waiting on the user in a window (the chat's approval
// card, quick-ask's popup): the window shows Request and calls Answer
// once, with Allow once, Always allow or Deny.
type Card struct {
	Request
	once   sync.Once
	answer chan Decision
}

// Answer gives the user's decision; later answers are ignored.
func (c *Card) Answer(d Decision) {
	c.once.Do(func() { c.answer <- d })
}

// Prompter is the AskFunc of a window: each question becomes a Card on
// Cards, and the call waits for its answer or for ctx (Esc) to end.
type Prompter struct {
	cards chan *Card
}

// NewPrompter returns a Prompter whose cards the window reads.
func NewPrompter() *Prompter { return &Prompter{cards: make(chan *Card)} }

// Cards delivers the questions, one at a time.
func (p *Prompter) Cards() <-chan *Card { return p.cards }

// Ask puts r before the user and waits for the answer.
func (p *Prompter) Ask(ctx context.Context, r Request) (Decision, error) {
	c := &Card{Request: r, answer: make(chan Decision, 1)}
	select {
	case p.cards <- c:
	case <-ctx.Done():
		return Deny, ctx.Err()
	}
	select {
	case d := <-c.answer:
		return d, nil
	case <-ctx.Done():
		return Deny, ctx.Err()
	}
}
