package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestChatPromptMatchesGoldenIDs: messages rendered by the model's template
// and tokenized give the reference ids (template goldens, tiny tokenizer).
func TestChatPromptMatchesGoldenIDs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("chattemplate", "testdata", "template-golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name     string `json:"name"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools  json.RawMessage `json:"tools"`
			Kwargs map[string]any  `json:"template_kwargs"`
			AddGen bool            `json:"add_generation_prompt"`
			IDs    []int32         `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	e := openTiny(t, "text-tiny", Options{})
	tried := 0
	for _, c := range g.Cases {
		// The engine's requests carry plain-text turns (and a thinking flag);
		// cases with tools, tool calls or media are the template package's.
		if string(c.Tools) != "null" || !c.AddGen {
			continue
		}
		req := Request{EnableThinking: c.Kwargs["enable_thinking"] == true}
		plain := true
		for _, m := range c.Messages {
			var text string
			if json.Unmarshal(m.Content, &text) != nil || m.Role == "tool" {
				plain = false
				break
			}
			req.Messages = append(req.Messages, Text(Role(m.Role), text))
		}
		if !plain {
			continue
		}
		tried++
		got, err := e.promptIDs(context.Background(), &req, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !slices.Equal(got, c.IDs) {
			t.Errorf("%s: ids %v\nwant %v", c.Name, got, c.IDs)
		}
	}
	if tried < 4 {
		t.Fatalf("only %d golden cases are plain-text chats", tried)
	}
	t.Logf("%d plain-text golden conversations matched", tried)
}
