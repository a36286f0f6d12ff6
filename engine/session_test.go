package engine

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"slices"
	"testing"
)

func run(t *testing.T, e *Engine, req Request) ([]int32, *Stats) {
	t.Helper()
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	_, last := collect(t, ch)
	if last.Kind != EventDone {
		t.Fatalf("generation failed: %v", last.Err)
	}
	return last.Stats.TokenIDs, last.Stats
}

func imageRequest(t *testing.T, ids []int32, image []byte) Request {
	return Request{PromptIDs: ids, MaxTokens: 6, IgnoreEOS: true, Sampling: Sampling{Temperature: f32(0)},
		Messages: []Message{{Role: RoleUser, Content: []Part{{Type: PartImage, Data: image}}}}}
}

// TestFollowUpReusesPrefix: asking again about the same photo runs no tower
// and prefills only the new tokens, with the same answer as a cold run.
func TestFollowUpReusesPrefix(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			img := media(t, "vision-tiny", "image.png")
			first := []int32{2, 123, 689, 1016, 270, 958, 321, 523}
			e := openTiny(t, "text-tiny", Options{Backend: backend})
			answer, s1 := run(t, e, imageRequest(t, first, img))
			if s1.PrefixReused != 0 || s1.EncoderHits != 0 {
				t.Fatalf("first request reused %d tokens, %d encoder hits", s1.PrefixReused, s1.EncoderHits)
			}
			follow := append(append(append([]int32{}, first...), answer...), 106, 107, 105, 300, 301, 302)
			warm, s2 := run(t, e, imageRequest(t, follow, img))
			// prompt (13 spliced) + the 5 answer tokens that were fed back are cached
			if s2.PrefixReused < 13 || s2.EncoderHits != 0 {
				t.Fatalf("follow-up reused %d tokens (want >= 13) and hit the encoder cache %d times (the image was in the cached prefix)", s2.PrefixReused, s2.EncoderHits)
			}
			cold := openTiny(t, "text-tiny", Options{Backend: backend})
			want, _ := run(t, cold, imageRequest(t, follow, img))
			if !slices.Equal(warm, want) {
				t.Fatalf("warm %v, cold %v", warm, want)
			}

			// The same photo behind different text: no prefix past the text, but
			// the tower output comes from the encoder cache.
			moved := []int32{2, 99, 1016, 270}
			got, s3 := run(t, e, imageRequest(t, moved, img))
			if s3.EncoderHits != 1 || s3.PrefixReused > 1 {
				t.Fatalf("moved image: %d encoder hits, %d reused", s3.EncoderHits, s3.PrefixReused)
			}
			want, _ = run(t, openTiny(t, "text-tiny", Options{Backend: backend}), imageRequest(t, moved, img))
			if !slices.Equal(got, want) {
				t.Fatalf("encoder-cache answer %v, cold %v", got, want)
			}
		})
	}
}

// TestDifferentImageSamePlaceholders: identical placeholder ids behind
// another photo must not reuse the first photo's keys.
func TestDifferentImageSamePlaceholders(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	img := media(t, "vision-tiny", "image.png")
	prompt := []int32{2, 123, 1016, 270, 958}
	run(t, e, imageRequest(t, prompt, img))
	other := invertPNG(t, img)
	got, s := run(t, e, imageRequest(t, prompt, other))
	if s.PrefixReused > 3 { // boi sits at position 3; image rows start at 4
		t.Fatalf("reused %d tokens across different photos behind the same placeholders", s.PrefixReused)
	}
	want, _ := run(t, openTiny(t, "text-tiny", Options{}), imageRequest(t, prompt, other))
	if !slices.Equal(got, want) {
		t.Fatalf("second photo answered %v, cold %v", got, want)
	}
}

// invertPNG returns the photo with its colours inverted, PNG-encoded.
func invertPNG(t *testing.T, data []byte) []byte {
	t.Helper()
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r := src.Bounds()
	dst := image.NewRGBA(r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)
			dst.SetRGBA(x, y, color.RGBA{255 - c.R, 255 - c.G, 255 - c.B, 255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, dst)
	return buf.Bytes()
}
