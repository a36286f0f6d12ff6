package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// collapse turns a spliced golden prompt back into what the chat template
// emits: one placeholder per item, boi/eoi (boa/eoa) removed.
func collapse(ids []int32, placeholder, open, close int32) []int32 {
	var out []int32
	for i, id := range ids {
		switch {
		case id == open || id == close:
		case id == placeholder && i > 0 && ids[i-1] == placeholder:
		default:
			out = append(out, id)
		}
	}
	return out
}

func media(t *testing.T, fixture, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "goldens", fixture, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type mmCase struct {
	name, model, fixture string
	kind                 PartType
	file                 string
	promptIDs, generated string // golden tensor names
}

var mmCases = []mmCase{
	{"siglip image", "text-tiny", "vision-tiny", PartImage, "image.png", "input_ids", "generated_ids_causal"},
	{"conformer audio", "text-tiny", "audio-tiny", PartAudio, "audio.wav", "input_ids", "generated_ids"},
	{"unified image", "vision-unified-tiny", "vision-unified-tiny", PartImage, "image.png", "image_prompt_ids", "image_prompt_generated_ids"},
	{"unified audio", "vision-unified-tiny", "vision-unified-tiny", PartAudio, "audio.wav", "audio_prompt_ids", "audio_prompt_generated_ids"},
}

// TestMultimodalGoldens: the raw media file goes through the whole pipeline
// (decode, preprocess, tower, splice, prefill, greedy decode) and gives the
// reference's spliced ids and greedy continuation.
func TestMultimodalGoldens(t *testing.T) {
	for _, c := range mmCases {
		for _, backend := range testBackends() {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				e := openTiny(t, c.model, Options{Backend: backend})
				spliced := goldenIDs(t, c.fixture, c.promptIDs)
				want := goldenIDs(t, c.fixture, c.generated)
				ph, open, close := e.cfg.ImageTokenID, e.cfg.BOITokenID, e.cfg.EOITokenID
				if c.kind == PartAudio {
					ph, open, close = e.cfg.AudioTokenID, e.cfg.BOATokenID, e.cfg.EOATokenID
				}
				req := Request{
					PromptIDs: collapse(spliced, ph, open, close), MaxTokens: len(want), IgnoreEOS: true,
					Sampling: Sampling{Temperature: f32(0)},
					Messages: []Message{{Role: RoleUser, Content: []Part{{Type: c.kind, Data: media(t, c.fixture, c.file), Name: c.file}}}},
				}
				j, err := e.prepare(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(j.prompt, spliced) {
					t.Fatalf("spliced ids %v\nwant %v", j.prompt, spliced)
				}
				ch, err := e.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				got, last := collect(t, ch)
				if last.Kind != EventDone || !slices.Equal(got, want) {
					t.Fatalf("greedy %v (%+v), want %v", got, last, want)
				}
				if n := last.Stats.PromptByKind[string(c.kind)]; n == 0 {
					t.Fatalf("stats count no %s tokens: %v", c.kind, last.Stats.PromptByKind)
				}
			})
		}
	}
}

// TestMixedPrompt: two images and an audio clip in one prompt splice in
// document order, each run bracketed by its own begin/end tokens.
func TestMixedPrompt(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	img, wav := media(t, "vision-tiny", "image.png"), media(t, "audio-tiny", "audio.wav")
	c := e.cfg
	req := Request{PromptIDs: []int32{2, c.ImageTokenID, c.ImageTokenID, c.AudioTokenID, 270}, MaxTokens: 2, IgnoreEOS: true,
		Messages: []Message{{Role: RoleUser, Content: []Part{
			{Type: PartImage, Data: img}, {Type: PartImage, Data: invertPNG(t, img)}, {Type: PartAudio, Data: wav}}}}}
	j, err := e.prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	run := func(open, ph, close int32, n int) []int32 {
		out := []int32{open}
		for i := 0; i < n; i++ {
			out = append(out, ph)
		}
		return append(out, close)
	}
	want := []int32{2}
	want = append(want, run(c.BOITokenID, c.ImageTokenID, c.EOITokenID, 6)...)
	want = append(want, run(c.BOITokenID, c.ImageTokenID, c.EOITokenID, 6)...)
	want = append(want, run(c.BOATokenID, c.AudioTokenID, c.EOATokenID, 38)...)
	want = append(want, 270)
	if !slices.Equal(j.prompt, want) {
		t.Fatalf("spliced %v\nwant %v", j.prompt, want)
	}
	m, blocks := j.prep.Media, j.prep.Blocks
	if m[0].Rows[0] != 2 || m[1].Rows[0] != 10 || m[2].Rows[0] != 18 || blocks[2] != 0 || blocks[10] != 1 || blocks[18] != -1 {
		t.Fatalf("rows start %d %d %d, blocks %v", m[0].Rows[0], m[1].Rows[0], m[2].Rows[0], blocks)
	}
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, last := collect(t, ch); last.Kind != EventDone || len(got) != 2 || last.Stats.PromptByKind["image"] != 12 || last.Stats.PromptByKind["audio"] != 38 {
		t.Fatalf("mixed generation: %v %+v", got, last)
	}
}
