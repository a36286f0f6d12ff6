package engine

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"perch/engine/chattemplate"
)

// tokenHostile are string pieces that, tokenized, become special tokens or
// byte-fallback pieces: the model writes them that way too.
var tokenHostile = []string{"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|image|>", "<|tool>", "`", `\`, `"`, "{", "}",
	"[", "]", ",", ":", "\n", "é", "🙂", "日本", "call:", "None", "<", "x", " ", "\x01"}

func tokenArgs(r *rand.Rand, depth int) map[string]any {
	obj := map[string]any{}
	for n := r.IntN(4); n > 0; n-- {
		key := []string{"city", "path", "q", "n", "opts", "ü_k"}[r.IntN(6)]
		switch k := r.IntN(6); {
		case k < 3:
			var b strings.Builder
			for m := r.IntN(5); m > 0; m-- {
				b.WriteString(tokenHostile[r.IntN(len(tokenHostile))])
			}
			obj[key] = b.String()
		case k == 3:
			obj[key] = []any{float64(r.IntN(2000) - 1000), 1.5e20, nil, true}[r.IntN(4)]
		case depth < 2:
			obj[key] = tokenArgs(r, depth+1)
		default:
			obj[key] = []any{}
		}
	}
	return obj
}

// TestToolCallRoundTripThroughTokens: arguments rendered by the real
// template, tokenized as the model would write them (special tokens and
// byte pieces inside strings included) and fed id by id through the
// engine's output give the same arguments back.
func TestToolCallRoundTripThroughTokens(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	tmpl, err := chattemplate.Load(filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 19))
	for i := 0; i < 500; i++ {
		want := tokenArgs(r, 0)
		raw, _ := json.Marshal(want)
		text, err := tmpl.Render(context.Background(), chattemplate.Input{Messages: []chattemplate.Message{
			{Role: "user", Content: "go"}, {Role: "assistant", ToolCalls: []chattemplate.ToolCall{{Name: "f", Arguments: raw}}}}})
		if err != nil {
			t.Fatal(err)
		}
		text = text[strings.LastIndex(text, "<|turn>model\n")+len("<|turn>model\n"):]
		j := &job{ctx: context.Background(), events: make(chan Event, 1<<14), req: Request{Tools: []Tool{{Name: "f"}}}}
		out := e.newOutput(j)
		for _, id := range e.tok.Encode(text, false) {
			if !out.token(id) {
				break
			}
		}
		close(j.events)
		var calls []ParsedCall
		for ev := range j.events {
			if ev.Kind == EventToolCall {
				calls = append(calls, ev.Call)
			} else if ev.Token.Text != "" {
				t.Fatalf("%q: text %q shown", text, ev.Token.Text)
			}
		}
		var got map[string]any
		if len(calls) != 1 || calls[0].Err != nil || json.Unmarshal(calls[0].Arguments, &got) != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("rendered %q\nwant %s\ngot %+v", text, raw, calls)
		}
	}
}
