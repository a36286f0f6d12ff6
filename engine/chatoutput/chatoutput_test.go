package chatoutput

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"perch/engine/tokenizer"
)

const tinyDir = "../tokenizer/testdata/tiny"

func loadTiny(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tinyStops reads the tiny checkpoint's generation_config.json eos ids; its
// config.json would say [1, 106] (research/gemma4.md §1.6).
func tinyStops(t testing.TB) map[int32]bool {
	t.Helper()
	data, err := os.ReadFile(tinyDir + "/generation_config.json")
	if err != nil {
		t.Fatal(err)
	}
	var gen struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(data, &gen); err != nil {
		t.Fatal(err)
	}
	genEOS, err := ParseEOS(gen.EOS)
	if err != nil {
		t.Fatal(err)
	}
	return StopIDs([]int32{1, 106}, genEOS)
}

// run feeds ids one by one and joins the deltas.
func run(s *Splitter, ids []int32, flush bool) (thinking, text string, reason *StopReason) {
	var th, tx strings.Builder
	for _, id := range ids {
		d, stop := s.Add(id)
		th.WriteString(d.Thinking)
		tx.WriteString(d.Text)
		if stop != nil {
			return th.String(), tx.String(), stop
		}
	}
	if flush {
		d := s.Flush()
		th.WriteString(d.Thinking)
		tx.WriteString(d.Text)
	}
	return th.String(), tx.String(), nil
}

func TestStopIDs(t *testing.T) {
	stops := tinyStops(t)
	if len(stops) != 3 || !stops[1] || !stops[106] || !stops[50] {
		t.Fatalf("stop set %v, want {1, 106, 50}", stops)
	}
	for raw, want := range map[string]int{`1`: 1, `[1, 106]`: 2, `null`: 0, ``: 0} {
		ids, err := ParseEOS(json.RawMessage(raw))
		if err != nil || len(ids) != want {
			t.Errorf("ParseEOS(%q) = %v, %v", raw, ids, err)
		}
	}
	if _, err := ParseEOS(json.RawMessage(`"<eos>"`)); err == nil {
		t.Error("ParseEOS accepted a string")
	}
}

func TestThinkingSplit(t *testing.T) {
	tok := loadTiny(t)
	for _, c := range []struct{ out, thinking, text string }{
		{"<|channel>thought\nLet me think: 2+2.<channel|>The answer is 4.", "Let me think: 2+2.", "The answer is 4."},
		{"<|channel>thought\n<channel|>Just the answer.", "", "Just the answer."},
		{"<|channel>Reasoning without the word.<channel|>ok", "Reasoning without the word.", "ok"},
		{"<|channel>thou<channel|>x", "thou", "x"},
		{"<|channel>thoughts\nare mine<channel|>x", "thoughts\nare mine", "x"},
		{"No channel at all 🦙", "", "No channel at all 🦙"},
		{"<|channel>thought\nstill thinking when cut off", "still thinking when cut off", ""},
	} {
		ids := tok.Encode(c.out, false)
		s := New(tok, Config{Stop: tinyStops(t)})
		thinking, text, stop := run(s, ids, true)
		if thinking != c.thinking || text != c.text || stop != nil {
			t.Errorf("%q:\n thinking %q (want %q)\n text %q (want %q), stop %v", c.out, thinking, c.thinking, text, c.text, stop)
		}
	}
	if id, _ := tok.TokenID(ChannelOpenText); id != 100 {
		t.Errorf("<|channel> is id %d in the tiny vocabulary, want 100", id)
	}
}

func TestStopToken(t *testing.T) {
	tok := loadTiny(t)
	ids := tok.Encode("<|channel>thought\nhm<channel|>Four.<turn|>ignored after the stop", false)
	s := New(tok, Config{Stop: tinyStops(t), StopStrings: []string{"Fourteen"}})
	thinking, text, stop := run(s, ids, false)
	if thinking != "hm" || text != "Four." || stop == nil || stop.Token != 106 {
		t.Fatalf("thinking %q text %q stop %+v", thinking, text, stop)
	}
	if d, again := s.Add(ids[0]); again == nil || d != (Delta{}) {
		t.Fatalf("Add after the stop returned %+v, %v", d, again)
	}
	// A tool call ends at <|tool_response> (id 50), with its markup kept.
	ids = tok.Encode(`<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|><|tool_response>`, false)
	_, text, stop = run(New(tok, Config{Stop: tinyStops(t)}), ids, false)
	if text != `<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>` || stop == nil || stop.Token != 50 {
		t.Fatalf("tool call: text %q stop %+v", text, stop)
	}
}

func TestStopStringsAcrossTokens(t *testing.T) {
	tok := loadTiny(t)
	s := New(tok, Config{Stop: tinyStops(t), StopStrings: []string{"END", "\n\nUser:"}})
	ids := tok.Encode("Here is the answer.\n\nUser: more", false)
	var emitted []string
	var stop *StopReason
	for _, id := range ids {
		var d Delta
		d, stop = s.Add(id)
		emitted = append(emitted, d.Text)
		if stop != nil {
			break
		}
	}
	if got := strings.Join(emitted, ""); got != "Here is the answer." || stop == nil || stop.String != "\n\nUser:" {
		t.Fatalf("got %q, stop %+v", got, stop)
	}
	for _, e := range emitted {
		if strings.Contains(e, "\n") {
			t.Fatalf("emitted %q: held-back text leaked before the stop string completed", e)
		}
	}
	// A stop string's start that never completes is shown at Flush.
	s = New(tok, Config{StopStrings: []string{"END"}})
	_, text, stop := run(s, tok.Encode("the EN", false), true)
	if text != "the EN" || stop != nil {
		t.Fatalf("got %q, %+v", text, stop)
	}
}

// TestStopStringProperty: for random texts and stop strings, the shown
// text is exactly the text before the stop string that completes first,
// whatever the token boundaries.
func TestStopStringProperty(t *testing.T) {
	tok := loadTiny(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "ab", " ", "é", "🦙", "\n", "the", "<turn", "|>"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for i := range 2000 {
		text := word(1 + rng.IntN(30))
		stops := []string{word(1 + rng.IntN(3)), word(1 + rng.IntN(2))}
		want, wantStop := text, ""
		first := -1
		for end := 1; end <= len(text) && first < 0; end++ { // grow the text byte by byte
			for start := 0; start < end && first < 0; start++ {
				for _, st := range stops {
					if text[start:end] == st {
						first, wantStop = start, st
						break
					}
				}
			}
		}
		if first >= 0 {
			want = text[:first]
		}
		_, got, stop := run(New(tok, Config{StopStrings: stops}), tok.Encode(text, false), true)
		if got != want || (stop == nil) != (first < 0) || (stop != nil && stop.String != wantStop) {
			t.Fatalf("case %d: text %q stops %q: got %q (stop %+v), want %q (%q)", i, text, stops, got, stop, want, wantStop)
		}
	}
}

// FuzzSplitter feeds arbitrary id sequences (any id, in range or not):
// no panic, every delta valid UTF-8, nothing after a stop.
func FuzzSplitter(f *testing.F) {
	tok := loadTiny(f)
	f.Add([]byte{100, 45, 101, 200, 106}, "x")
	f.Add([]byte{120, 255, 3, 100, 100, 101, 101}, "")
	f.Fuzz(func(t *testing.T, raw []byte, stopString string) {
		s := New(tok, Config{Stop: tinyStops(t), StopStrings: []string{stopString}, SkipSpecial: len(raw)%2 == 0})
		stopped := false
		for i := 0; i+1 < len(raw); i += 2 {
			id := int32(raw[i])<<8 | int32(raw[i+1]) - 2
			d, stop := s.Add(id % int32(tok.VocabSize()+8))
			if stopped && (d != Delta{}) {
				t.Fatalf("delta %+v after the stop", d)
			}
			if !utf8.ValidString(d.Text) || !utf8.ValidString(d.Thinking) {
				t.Fatalf("invalid UTF-8 in %+v", d)
			}
			stopped = stop != nil
		}
		if d := s.Flush(); !utf8.ValidString(d.Text + d.Thinking) {
			t.Fatalf("invalid UTF-8 in %+v", d)
		}
	})
}
