package engine

import (
	"context"
	"strings"
	"testing"
)

// feed runs ids through an output and returns (thinking text, answer text,
// whether a stop string ended it).
func feed(t *testing.T, e *Engine, stops []string, ids []int32) (string, string, bool) {
	t.Helper()
	j := &job{ctx: context.Background(), events: make(chan Event, 4096), req: Request{Stop: stops}}
	o := e.newOutput(j)
	stopped := false
	for _, id := range ids {
		if !o.token(id) {
			stopped = true
			break
		}
	}
	if !stopped {
		o.flush()
	}
	close(j.events)
	var think, answer strings.Builder
	for ev := range j.events {
		if ev.Token.Thinking {
			think.WriteString(ev.Token.Text)
		} else {
			answer.WriteString(ev.Token.Text)
		}
	}
	return think.String(), answer.String(), stopped
}

func TestThinkingChannelSplit(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	open, _ := e.tok.TokenID("<|channel>")
	shut, _ := e.tok.TokenID("<channel|>")
	var ids []int32
	ids = append(ids, open)
	ids = append(ids, e.tok.Encode("thought\nLet me add 2 and 2.", false)...)
	ids = append(ids, shut)
	ids = append(ids, e.tok.Encode("The answer is 4.", false)...)
	think, answer, _ := feed(t, e, nil, ids)
	if think != "Let me add 2 and 2." || answer != "The answer is 4." {
		t.Fatalf("thinking %q, answer %q", think, answer)
	}
}

func TestStopStringsAcrossTokens(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	ids := e.tok.Encode("Hello world. STOP here please", false)
	_, answer, stopped := feed(t, e, []string{"STOP"}, ids)
	if !stopped || answer != "Hello world. " {
		t.Fatalf("answer %q, stopped %v", answer, stopped)
	}
	// A partial match that does not complete is released at the end.
	_, answer, stopped = feed(t, e, []string{"STOPPED"}, e.tok.Encode("Hello STOP", false))
	if stopped || answer != "Hello STOP" {
		t.Fatalf("answer %q, stopped %v", answer, stopped)
	}
}

func TestUTF8SafeDeltas(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	text := "café 🦙 日本"
	ids := e.tok.Encode(text, false)
	j := &job{ctx: context.Background(), events: make(chan Event, 4096)}
	o := e.newOutput(j)
	for _, id := range ids {
		o.token(id)
	}
	o.flush()
	close(j.events)
	var all strings.Builder
	for ev := range j.events {
		if !isValidUTF8(ev.Token.Text) {
			t.Fatalf("delta %q is not valid UTF-8", ev.Token.Text)
		}
		all.WriteString(ev.Token.Text)
	}
	if all.String() != text {
		t.Fatalf("streamed %q, want %q", all.String(), text)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
