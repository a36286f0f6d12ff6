package trainset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/processor"
	"perch/engine/gocpu"
	"perch/engine/prompt"
	"perch/engine/train"
)

const tinyImage = "../../testdata/goldens/vision-tiny/image.png"

func mediaEncoder(t *testing.T, m train.Method) (*Encoder, string) {
	t.Helper()
	enc := tinyEncoder(t, m)
	proc, err := processor.Load(tinyModel, processor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	enc.Processor = proc
	dir := t.TempDir()
	data, err := os.ReadFile(tinyImage)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "photos"), 0o755)
	os.WriteFile(filepath.Join(dir, "photos", "bird.png"), data, 0o644)
	enc.Dir = dir
	return enc, dir
}

// TestImageRowsAsChatRequests: an image row's prompt is exactly what the
// processor prepares for a chat request with that photo; the media are
// prepared again for the step and spliced into the embeddings.
func TestImageRowsAsChatRequests(t *testing.T) {
	enc, dir := mediaEncoder(t, train.SFT)
	line := `{"messages": [{"role": "user", "content": [{"type": "image", "image": "photos/bird.png"}, {"type": "text", "text": "What bird?"}]}, {"role": "assistant", "content": "A robin."}]}`
	row := encodeOne(t, enc, line)
	img, _ := os.ReadFile(tinyImage)
	want, err := enc.Processor.Prepare(context.Background(), []prompt.Message{{Role: prompt.User, Content: []prompt.Part{
		{Type: prompt.Image, Data: img}, {Type: prompt.Text, Text: "What bird?"}}}}, processor.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(row.IDs[:row.PromptLen], want.IDs) || row.Media != nil {
		t.Fatalf("prompt %v (media kept: %v), a chat request prepares %v", row.IDs[:row.PromptLen], row.Media != nil, want.IDs)
	}
	if got := enc.Tok.Decode(row.IDs[row.PromptLen:], false); got != "A robin.<turn|>\n" {
		t.Errorf("target %q", got)
	}
	ready, err := row.WithMedia(context.Background())
	if err != nil || len(ready.Media) != 1 || !slices.Equal(ready.Media[0].Rows, want.Media[0].Rows) {
		t.Fatalf("prepared again: %+v %v", ready.Media, err)
	}

	b := gocpu.New(gocpu.Options{})
	defer b.Close()
	m, err := gemma4.Load(b, tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := ready.Features(b, m)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ready.Inputs(b, m.Text, ready.IDs, feats, int32(m.Text.Cfg.PadTokenID))
	if err != nil || in.Embeds == nil || in.PLEIDs == nil {
		t.Fatalf("inputs %+v %v", in, err)
	}
	ple, _ := b.Int32s(in.PLEIDs)
	if r := ready.Media[0].Rows[0]; ple[r] != int32(m.Text.Cfg.PadTokenID) || ple[0] != ready.IDs[0] {
		t.Errorf("per-layer ids %v", ple[:r+1])
	}

	// The same photo in a preference prompt; a missing file names its line.
	pref, _ := mediaEncoder(t, train.DPO)
	pref.Dir = dir
	pair := encodeOne(t, pref, `{"prompt": [{"role": "user", "content": [{"type": "image", "path": "photos/bird.png"}, {"type": "text", "text": "What bird?"}]}], "chosen": "A robin.", "rejected": "A cat."}`)
	if !slices.Equal(pair.Prompt, want.IDs) {
		t.Errorf("pair prompt %v", pair.Prompt)
	}
	bad := map[string]string{
		"missing file":    strings.Replace(line, "photos/bird.png", "photos/none.png", 1),
		"media in answer": `{"messages": [{"role": "user", "content": "Draw"}, {"role": "assistant", "content": [{"type": "image", "image": "photos/bird.png"}]}]}`,
		"not an image":    strings.Replace(line, "photos/bird.png", "../"+filepath.Base(dir)+"/photos", 1),
	}
	for name, l := range bad {
		_, err := ReadSplit(context.Background(), strings.NewReader(l+"\n"), "train.jsonl", enc, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "train.jsonl:1: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	noProc := tinyEncoder(t, train.SFT)
	if _, err := ReadSplit(context.Background(), strings.NewReader(line+"\n"), "train.jsonl", noProc, nil); err == nil || !strings.Contains(err.Error(), "processor") {
		t.Errorf("no processor: %v", err)
	}
}
