package trainset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/chattemplate"
	"perch/engine/gemma4/processor"
	"perch/engine/prompt"
	"perch/engine/tokenizer"
	"perch/engine/train"
)

const tinyModel = "../../testdata/models/text-tiny"

func tinyEncoder(t testing.TB, m train.Method) *Encoder {
	t.Helper()
	tmpl, err := chattemplate.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	return &Encoder{Template: tmpl, Tok: tok, Method: m, Vocab: 1024}
}

func encodeOne(t *testing.T, enc *Encoder, line string) train.Row {
	t.Helper()
	row, note, ok, err := enc.Encode(context.Background(), []byte(line))
	if err != nil || !ok || note != "" {
		t.Fatalf("%s: ok %v note %q err %v", line, ok, note, err)
	}
	return row
}

// inferencePrompt is what the processor feeds a chat request with these
// messages.
func inferencePrompt(t *testing.T, enc *Encoder, msgs ...chattemplate.Message) []int32 {
	t.Helper()
	proc, err := processor.Load(tinyModel, processor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pm []prompt.Message
	for _, m := range msgs {
		pm = append(pm, prompt.TextMessage(prompt.Role(m.Role), m.Content))
	}
	prep, err := proc.Prepare(context.Background(), pm, processor.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return prep.IDs
}

// TestChatRowsSplitAsInference: the prompt of a chat row is exactly what a
// chat request renders; the target is the answer and its end of turn.
func TestChatRowsSplitAsInference(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	user := chattemplate.Message{Role: "user", Content: "Name a bird."}
	sys := chattemplate.Message{Role: "system", Content: "Be brief."}
	cases := []struct {
		line   string
		prompt []chattemplate.Message
	}{
		{`{"messages": [{"role": "user", "content": "Name a bird."}, {"role": "assistant", "content": "A robin."}]}`, []chattemplate.Message{user}},
		{`{"prompt": "Name a bird.", "completion": "A robin."}`, []chattemplate.Message{user}},
		{`{"system": "Be brief.", "prompt": "Name a bird.", "completion": "A robin."}`, []chattemplate.Message{sys, user}},
		{`{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "Name a bird."}]}, {"role": "assistant", "content": "A robin."}]}`, []chattemplate.Message{sys, user}},
	}
	for _, c := range cases {
		row := encodeOne(t, enc, c.line)
		want := inferencePrompt(t, enc, c.prompt...)
		if !slices.Equal(row.IDs[:row.PromptLen], want) {
			t.Errorf("%s: prompt %v, a chat request renders %v", c.line, row.IDs[:row.PromptLen], want)
		}
		if got := enc.Tok.Decode(row.IDs[row.PromptLen:], false); got != "A robin.<turn|>\n" {
			t.Errorf("%s: target %q, want the answer and its end of turn", c.line, got)
		}
	}
}

// TestMultiTurnLossOnLastAnswer: earlier assistant turns are prompt.
func TestMultiTurnLossOnLastAnswer(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	row := encodeOne(t, enc, `{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Goodbye."}]}`)
	prompt := enc.Tok.Decode(row.IDs[:row.PromptLen], false)
	if !strings.Contains(prompt, "Hello.") || strings.Contains(prompt, "Goodbye") {
		t.Errorf("prompt %q", prompt)
	}
	if got := enc.Tok.Decode(row.IDs[row.PromptLen:], false); got != "Goodbye.<turn|>\n" {
		t.Errorf("target %q", got)
	}
}

// TestToolsAndThinking: tools reach the template, a tool-call answer is the
// target as the template writes it, and enable_thinking changes the prompt
// as at inference.
func TestToolsAndThinking(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	tool := `{"type": "function", "function": {"name": "weather", "description": "Weather now", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}`
	row := encodeOne(t, enc, `{"tools": [`+tool+`], "messages": [{"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "weather", "arguments": {"city": "Oslo"}}}]}]}`)
	prompt, target := enc.Tok.Decode(row.IDs[:row.PromptLen], false), enc.Tok.Decode(row.IDs[row.PromptLen:], false)
	if !strings.Contains(prompt, "weather") || !strings.Contains(target, "weather") || !strings.Contains(target, "Oslo") {
		t.Errorf("prompt %q target %q", prompt, target)
	}
	plain := encodeOne(t, enc, `{"prompt": "Hi", "completion": "Hello."}`)
	think := encodeOne(t, enc, `{"prompt": "Hi", "completion": "Hello.", "enable_thinking": true}`)
	if slices.Equal(plain.IDs[:plain.PromptLen], think.IDs[:think.PromptLen]) {
		t.Error("enable_thinking did not change the prompt")
	}
	if !slices.Equal(plain.IDs[plain.PromptLen:], think.IDs[think.PromptLen:]) {
		t.Error("enable_thinking changed the target")
	}
}

func TestTextAndPretokenizedRows(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	row := encodeOne(t, enc, `{"text": "The robin sings."}`)
	bos, _ := enc.Tok.BOS()
	eos, _ := enc.Tok.EOS()
	if row.IDs[0] != bos || row.IDs[len(row.IDs)-1] != eos || row.PromptLen != 1 {
		t.Errorf("text row %v (prompt_len %d)", row.IDs, row.PromptLen)
	}
	row = encodeOne(t, enc, `{"input_ids": [2, 454, 235, 652, 827], "prompt_len": 3}`)
	if !slices.Equal(row.IDs, []int32{2, 454, 235, 652, 827}) || row.PromptLen != 3 {
		t.Errorf("pre-tokenized %+v", row)
	}
	row = encodeOne(t, enc, `{"input_ids": [2, 454, 235]}`)
	if row.PromptLen != 1 {
		t.Errorf("no prompt_len: %d, want every token after the first", row.PromptLen)
	}
	pref := tinyEncoder(t, train.DPO)
	row = encodeOne(t, pref, `{"prompt_ids": [2, 689], "chosen_ids": [714, 495], "rejected_ids": [3]}`)
	if !slices.Equal(row.Prompt, []int32{2, 689}) || !slices.Equal(row.Chosen, []int32{714, 495}) || !slices.Equal(row.Rejected, []int32{3}) {
		t.Errorf("pre-tokenized pair %+v", row)
	}
}

// TestPreferenceRows: strings and message lists give the same pair; the
// prompt is a chat request's, the responses carry no prompt.
func TestPreferenceRows(t *testing.T) {
	for _, m := range []train.Method{train.DPO, train.ORPO} {
		enc := tinyEncoder(t, m)
		a := encodeOne(t, enc, `{"system": "Be brief.", "prompt": "Name a bird.", "chosen": "A robin.", "rejected": "I cannot."}`)
		b := encodeOne(t, enc, `{"prompt": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a bird."}], "chosen": [{"role": "assistant", "content": "A robin."}], "rejected": [{"role": "assistant", "content": "I cannot."}]}`)
		if !slices.Equal(a.Prompt, b.Prompt) || !slices.Equal(a.Chosen, b.Chosen) || !slices.Equal(a.Rejected, b.Rejected) {
			t.Errorf("%s: string and message forms differ:\n%+v\n%+v", m, a, b)
		}
		want := inferencePrompt(t, enc, chattemplate.Message{Role: "system", Content: "Be brief."}, chattemplate.Message{Role: "user", Content: "Name a bird."})
		if !slices.Equal(a.Prompt, want) {
			t.Errorf("%s: prompt %v, a chat request renders %v", m, a.Prompt, want)
		}
		if c, r := enc.Tok.Decode(a.Chosen, false), enc.Tok.Decode(a.Rejected, false); c != "A robin.<turn|>\n" || r != "I cannot.<turn|>\n" {
			t.Errorf("%s: chosen %q rejected %q", m, c, r)
		}
	}
}

func TestCutToMaxLen(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	enc.MaxLen = 4
	row, note, ok, err := enc.Encode(context.Background(), []byte(`{"input_ids": [2, 3, 4, 5, 6, 7], "prompt_len": 2}`))
	if err != nil || !ok || !strings.Contains(note, "cut from 6 to 4") || len(row.IDs) != 4 {
		t.Errorf("row %+v note %q ok %v err %v", row, note, ok, err)
	}
	_, note, ok, err = enc.Encode(context.Background(), []byte(`{"input_ids": [2, 3, 4, 5, 6, 7], "prompt_len": 5}`))
	if err != nil || ok || !strings.Contains(note, "skipped") {
		t.Errorf("prompt over the limit: note %q ok %v err %v", note, ok, err)
	}
	pref := tinyEncoder(t, train.ORPO)
	pref.MaxLen = 5
	row, note, ok, err = pref.Encode(context.Background(), []byte(`{"prompt_ids": [2, 3], "chosen_ids": [4, 5, 6, 7], "rejected_ids": [8]}`))
	if err != nil || !ok || note == "" || len(row.Chosen) != 3 || len(row.Rejected) != 1 {
		t.Errorf("pair %+v note %q ok %v err %v", row, note, ok, err)
	}
}

// TestMalformedLinesNameFileAndLine: every kind of bad line stops the load
// with its file and line number.
func TestMalformedLinesNameFileAndLine(t *testing.T) {
	good := `{"prompt": "Hi", "completion": "Hello."}`
	bad := map[string]string{
		"not json":        `{"prompt": "Hi", `,
		"not an object":   `[1, 2]`,
		"no format":       `{"question": "Hi"}`,
		"last not asst":   `{"messages": [{"role": "user", "content": "Hi"}]}`,
		"bad role":        `{"messages": [{"role": "robot", "content": "Hi"}, {"role": "assistant", "content": "x"}]}`,
		"bad part":        `{"messages": [{"role": "user", "content": [{"type": "pdf"}]}, {"role": "assistant", "content": "x"}]}`,
		"id out of vocab": `{"input_ids": [2, 5000], "prompt_len": 1}`,
		"negative id":     `{"input_ids": [2, -1]}`,
		"prompt_len":      `{"input_ids": [2, 3], "prompt_len": 2}`,
		"pair in sft":     `{"prompt": "Hi", "chosen": "a", "rejected": "b"}`,
		"no completion":   `{"prompt": "Hi", "completion": null}`,
		"trailing data":   `{"text": "a"} {"text": "b"}`,
		"text not str":    `{"text": 5}`,
		"remote image":    `{"messages": [{"role": "user", "content": [{"type": "image", "image": "https://x/y.png"}]}, {"role": "assistant", "content": "x"}]}`,
	}
	enc := tinyEncoder(t, train.SFT)
	for name, line := range bad {
		data := good + "\n\n" + good + "\n" + line + "\n" + good + "\n"
		_, err := ReadSplit(context.Background(), strings.NewReader(data), "train.jsonl", enc, nil)
		var le *LineError
		if !errors.As(err, &le) || le.File != "train.jsonl" || le.Line != 4 || !strings.HasPrefix(err.Error(), "train.jsonl:4: ") {
			t.Errorf("%s: %v, want an error at train.jsonl:4", name, err)
		}
	}
	if _, err := ReadSplit(context.Background(), strings.NewReader(good+"\n"), "valid.jsonl", tinyEncoder(t, train.DPO), nil); err == nil || !strings.HasPrefix(err.Error(), "valid.jsonl:1: ") {
		t.Errorf("an sft row in a dpo run: %v", err)
	}
}

// TestLongLineStopsEarly: a huge line is refused without being held whole,
// and a huge file stops at its first bad line without reading the rest.
func TestLongLineStopsEarly(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	huge := strings.NewReader(`{"text": "` + strings.Repeat("a", MaxLineBytes+10) + `"}`)
	if _, err := ReadSplit(context.Background(), huge, "train.jsonl", enc, nil); err == nil || !strings.Contains(err.Error(), "train.jsonl:1: the line is longer") {
		t.Errorf("huge line: %v", err)
	}
	r := &countingReader{lines: 1 << 30, bad: 3}
	if _, err := ReadSplit(context.Background(), r, "train.jsonl", enc, nil); err == nil || !strings.HasPrefix(err.Error(), "train.jsonl:3: ") {
		t.Errorf("endless file: %v", err)
	}
	if r.read > 1<<20 {
		t.Errorf("read %d bytes before the error at line 3", r.read)
	}
}

// countingReader is an endless JSONL stream whose line bad is malformed.
type countingReader struct {
	lines, bad, n int
	read          int
	pending       []byte
}

func (c *countingReader) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		c.n++
		if c.n == c.bad {
			c.pending = []byte("{oops\n")
		} else {
			c.pending = []byte(`{"input_ids": [2, 3, 4]}` + "\n")
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	c.read += n
	return n, nil
}

func TestLoadFolder(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadFolder(context.Background(), dir, enc); err == nil || !strings.Contains(err.Error(), "train.jsonl") {
		t.Errorf("no train.jsonl: %v", err)
	}
	write("train.jsonl", `{"text": "a b c"}`+"\n"+`{"prompt": "Hi", "completion": "Hello."}`+"\n")
	ds, err := LoadFolder(context.Background(), dir, enc)
	if err != nil || len(ds.Train.Rows) != 2 || ds.Valid != nil || ds.Train.Rows[1].Source != "train.jsonl:2" {
		t.Fatalf("%+v %v", ds, err)
	}
	write("valid.jsonl", "\n")
	if _, err := LoadFolder(context.Background(), dir, enc); err == nil || !strings.Contains(err.Error(), "valid.jsonl has no rows") {
		t.Errorf("empty valid.jsonl: %v", err)
	}
	write("valid.jsonl", `{"text": "d e"}`+"\n")
	if ds, err = LoadFolder(context.Background(), dir, enc); err != nil || len(ds.Valid.Rows) != 1 {
		t.Errorf("%+v %v", ds, err)
	}
	if _, err := LoadFolder(context.Background(), filepath.Join(dir, "train.jsonl"), enc); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("a file as the folder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadFolder(ctx, dir, enc); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// FuzzEncode: no line panics the encoder; a row it returns is consistent.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{
		`{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}`,
		`{"prompt": "Hi", "completion": "Hello.", "system": "x"}`,
		`{"text": "abc"}`,
		`{"input_ids": [2, 3, 4], "prompt_len": 1}`,
		`{"prompt": "Hi", "chosen": "a", "rejected": "b"}`,
		`{"prompt_ids": [2], "chosen_ids": [3], "rejected_ids": [4]}`,
		`{"tools": [{"type": "function", "function": {"name": "f"}}], "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]}`,
		`{"messages": [{"role": "user", "content": [{"type": "image", "image": "a.png"}, {"type": "text", "text": "?"}]}, {"role": "assistant", "content": "x"}]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	sft, pref := tinyEncoder(f, train.SFT), tinyEncoder(f, train.DPO)
	sft.MaxLen, pref.MaxLen = 64, 64
	f.Fuzz(func(t *testing.T, line []byte, preference bool) {
		enc := sft
		if preference {
			enc = pref
		}
		row, _, ok, err := enc.Encode(context.Background(), line)
		if err != nil || !ok {
			return
		}
		if row.Tokens() > 2*64 || (row.IDs != nil && (row.PromptLen < 1 || row.PromptLen >= len(row.IDs))) {
			t.Fatalf("inconsistent row %+v", row)
		}
		if row.IDs == nil && (len(row.Prompt) == 0 || len(row.Chosen) == 0 || len(row.Rejected) == 0) {
			t.Fatalf("inconsistent pair %+v", row)
		}
	})
}

// TestByteOrderMark: a UTF-8 BOM before the first row is accepted; a
// UTF-16 file is named as such.
func TestByteOrderMark(t *testing.T) {
	enc := tinyEncoder(t, train.SFT)
	row := `{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}` + "\n"
	s, err := ReadSplit(context.Background(), strings.NewReader("\xef\xbb\xbf"+row+row), "train.jsonl", enc, nil)
	if err != nil || len(s.Rows) != 2 {
		t.Fatalf("UTF-8 BOM: %v", err)
	}
	_, err = ReadSplit(context.Background(), strings.NewReader("\xff\xfe{\x00"), "train.jsonl", enc, nil)
	if err == nil || !strings.Contains(err.Error(), "train.jsonl:1: the file is UTF-16") {
		t.Errorf("UTF-16: %v", err)
	}
}
