package engine

import (
	"context"
	"errors"
	"testing"
)

// Measure counts exactly what Generate prefills, message by message, and
// Generate's refusal of a full context is typed.
func TestMeasureMatchesThePromptTurnByTurn(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{MaxContext: 512})
	img := media(t, "vision-tiny", "image.png")
	req := Request{Messages: []Message{
		Text(RoleSystem, "Be brief."),
		{Role: RoleUser, Content: []Part{{Type: PartImage, Data: img}, {Type: PartText, Text: "What is this?"}}},
		Text(RoleAssistant, "A picture."),
		Text(RoleUser, "And now?"),
	}, MaxTokens: 1, Sampling: Sampling{Temperature: f32(0)}}
	m, err := e.Measure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Context != 512 || len(m.Messages) != 4 {
		t.Fatalf("measure = %+v", m)
	}
	sum := 0
	for i, ms := range m.Messages {
		sum += ms.Tokens
		if (i == 1) != (ms.Media > 0) || ms.Media >= ms.Tokens {
			t.Errorf("message %d: %+v (only the photo's turn holds media)", i, ms)
		}
	}
	if sum >= m.Tokens || m.Tokens-sum > 32 {
		t.Errorf("turns sum to %d of %d prompt tokens (the rest is <bos> and the generation prompt)", sum, m.Tokens)
	}
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	_, done := collect(t, ch)
	if done.Kind != EventDone || done.Stats.PromptTokens != m.Tokens {
		t.Fatalf("Generate prefilled %+v, Measure said %d", done.Stats, m.Tokens)
	}
	// Without the photo the turn shrinks by exactly its media tokens.
	req.Messages[1].Content = req.Messages[1].Content[1:]
	m2, err := e.Measure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokens-m2.Tokens != m.Messages[1].Media {
		t.Errorf("dropping the photo saved %d tokens, Measure said its media were %d", m.Tokens-m2.Tokens, m.Messages[1].Media)
	}
	// A prompt the context cannot hold is refused with its size.
	long := Request{Messages: []Message{Text(RoleUser, repeat("word ", 600))}}
	_, err = e.Generate(context.Background(), long)
	var ce *ContextError
	if !errors.As(err, &ce) || ce.Context != 512 || ce.Prompt < 512 {
		t.Fatalf("oversized prompt: %v", err)
	}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		out = append(out, s...)
	}
	return string(out)
}
