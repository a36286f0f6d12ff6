package gemma4_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/processor"
)

// publishedDir holds the config.json key sets of the published checkpoints
// (testdata/published/README.md says where each comes from).
const publishedDir = "testdata/published"

type published struct {
	repo string // "google/gemma-4-E2B-it"
	dir  string
	raw  []byte
}

func publishedConfigs(t *testing.T) []published {
	t.Helper()
	entries, err := os.ReadDir(publishedDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []published
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(publishedDir, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		owner, name, _ := cutDashes(e.Name())
		out = append(out, published{owner + "/" + name, dir, raw})
	}
	if len(out) < 10 {
		t.Fatalf("only %d published configs in %s", len(out), publishedDir)
	}
	return out
}

func cutDashes(s string) (string, string, bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '-' && s[i+1] == '-' {
			return s[:i], s[i+2:], true
		}
	}
	return s, "", false
}

// TestPublishedConfigs: every published key set parses, every key in it is
// read or knowingly ignored, and the top-level eos_token_id wins over
// text_config's.
func TestPublishedConfigs(t *testing.T) {
	for _, p := range publishedConfigs(t) {
		t.Run(p.repo, func(t *testing.T) {
			c, err := gemma4.ParseConfig(p.raw)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Unrecognized) != 0 {
				t.Errorf("keys neither read nor knowingly ignored: %v", c.Unrecognized)
			}
			var doc struct {
				EOS  json.RawMessage `json:"eos_token_id"`
				Text struct {
					EOS json.RawMessage `json:"eos_token_id"`
				} `json:"text_config"`
			}
			if err := json.Unmarshal(p.raw, &doc); err != nil {
				t.Fatal(err)
			}
			want := doc.EOS
			if want == nil {
				want = doc.Text.EOS
			}
			ids, err := gemma4.IntOrList(want)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.EOSTokenIDs, ids) {
				t.Errorf("eos %v, want %v (top level first)", c.EOSTokenIDs, ids)
			}
			if c.Vision == nil {
				t.Error("every published Gemma-4 has a vision tower")
			}
			t.Logf("eos %v, vision %v, audio %v, %d layers", c.EOSTokenIDs, c.Vision != nil, c.Audio != nil, c.Text.NumHiddenLayers)
		})
	}
}

// TestUnrecognizedKeysReported: a key nothing reads is reported, in every
// section, so the published-key-set test above can fail.
func TestUnrecognizedKeysReported(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(publishedDir, "google--gemma-4-E2B-it", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"", "text_config", "vision_config", "audio_config"} {
		var doc map[string]any
		json.Unmarshal(raw, &doc)
		target := doc
		if section != "" {
			target = doc[section].(map[string]any)
		}
		target["brand_new_knob"] = 3
		b, _ := json.Marshal(doc)
		c, err := gemma4.ParseConfig(b)
		if err != nil {
			t.Fatal(err)
		}
		want := "config.brand_new_knob"
		if section != "" {
			want = section + ".brand_new_knob"
		}
		if !slices.Equal(c.Unrecognized, []string{want}) {
			t.Errorf("%s: unrecognized %v, want [%s]", section, c.Unrecognized, want)
		}
	}
}

// TestTopLevelWinsOverTextConfig: issue 13's case, with and without the
// list form, and a flat text-only config.
func TestTopLevelWinsOverTextConfig(t *testing.T) {
	base := fixtureConfig(t)
	for _, eos := range [][]int32{{1, 106}, {1, 106, 50}, {7}} {
		var doc map[string]any
		json.Unmarshal(base, &doc)
		doc["eos_token_id"] = eos
		doc["text_config"].(map[string]any)["eos_token_id"] = 1
		doc["tie_word_embeddings"] = true
		doc["text_config"].(map[string]any)["tie_word_embeddings"] = false
		b, _ := json.Marshal(doc)
		c, err := gemma4.ParseConfig(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.EOSTokenIDs, eos) {
			t.Errorf("eos %v, want %v", c.EOSTokenIDs, eos)
		}
		if c.Text.TieWordEmbeddings == nil || !*c.Text.TieWordEmbeddings {
			t.Error("top-level tie_word_embeddings true should win over text_config's false")
		}
	}
	// Without a top-level value, text_config's applies.
	var doc map[string]any
	json.Unmarshal(base, &doc)
	delete(doc, "eos_token_id")
	doc["text_config"].(map[string]any)["eos_token_id"] = []int{1, 106}
	b, _ := json.Marshal(doc)
	c, err := gemma4.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.EOSTokenIDs, []int32{1, 106}) {
		t.Errorf("text_config eos %v", c.EOSTokenIDs)
	}
}

// TestVisionSoftTokensFallback: a vision_config without
// default_output_length takes vision_soft_tokens_per_image; with neither
// the config is refused.
func TestVisionSoftTokensFallback(t *testing.T) {
	var doc map[string]any
	json.Unmarshal(fixtureConfig(t), &doc)
	delete(doc["vision_config"].(map[string]any), "default_output_length")
	doc["vision_soft_tokens_per_image"] = 140
	b, _ := json.Marshal(doc)
	c, err := gemma4.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Vision.DefaultSoftTokens() != 140 {
		t.Fatalf("soft tokens %d", c.Vision.DefaultSoftTokens())
	}
	delete(doc, "vision_soft_tokens_per_image")
	b, _ = json.Marshal(doc)
	if _, err := gemma4.ParseConfig(b); err == nil {
		t.Fatal("accepted a vision tower with no image budget")
	}
}

// TestPublishedProcessorConfigs: every key of the published
// processor_config.json is read or knowingly built in, and the built-in
// values are the published ones.
func TestPublishedProcessorConfigs(t *testing.T) {
	for _, p := range publishedConfigs(t) {
		raw, err := os.ReadFile(filepath.Join(p.dir, "processor_config.json"))
		if os.IsNotExist(err) {
			continue // mlx-community copies google's file
		}
		if err != nil {
			t.Fatal(err)
		}
		keys, err := processor.UnknownKeys(raw)
		if err != nil || len(keys) != 0 {
			t.Errorf("%s: keys neither read nor built in: %v (%v)", p.repo, keys, err)
		}
		var doc struct {
			Image struct {
				Rescale   float64 `json:"rescale_factor"`
				Normalize bool    `json:"do_normalize"`
				Resample  int     `json:"resample"`
			} `json:"image_processor"`
			Feature *struct {
				Rate    int     `json:"sampling_rate"`
				Bins    int     `json:"feature_size"`
				Frame   int     `json:"frame_length"`
				Hop     int     `json:"hop_length"`
				FFT     int     `json:"fft_length"`
				Floor   float64 `json:"mel_floor"`
				MaxFreq float64 `json:"max_frequency"`
			} `json:"feature_extractor"`
			Video struct {
				FPS    float64 `json:"fps"`
				Frames int     `json:"num_frames"`
			} `json:"video_processor"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Image.Rescale != 1.0/255 || doc.Image.Normalize || doc.Image.Resample != 3 || doc.Video.FPS != 2 || doc.Video.Frames != 32 {
			t.Errorf("%s: image/video preprocessing differs from the built-in: %+v %+v", p.repo, doc.Image, doc.Video)
		}
		if f := doc.Feature; f != nil && (f.Rate != 16000 || f.Bins != 128 || f.Frame != 320 || f.Hop != 160 || f.FFT != 512 || f.Floor != 1e-3 || f.MaxFreq != 8000) {
			t.Errorf("%s: log-mel front end differs from media/logmel.Gemma4: %+v", p.repo, *f)
		}
	}
}
