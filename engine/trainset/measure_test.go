package trainset

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"perch/engine/train"
	"perch/media/audio"
	"perch/media/picture"
	"perch/media/video"
)

// countingVideo passes probes through and counts frame decodes.
type countingVideo struct {
	video.Source
	probes, decodes atomic.Int32
}

func (c *countingVideo) Probe(ctx context.Context, data []byte) (video.Info, error) {
	c.probes.Add(1)
	return c.Source.Probe(ctx, data)
}

func (c *countingVideo) Frames(ctx context.Context, data []byte, times []float64, w, h int) ([]*picture.RGB, error) {
	c.decodes.Add(1)
	return c.Source.Frames(ctx, data, times, w, h)
}

// countingAudio passes duration probes through and counts decodes.
type countingAudio struct {
	audio.Decoder
	decodes atomic.Int32
}

func (c *countingAudio) Decode(ctx context.Context, data []byte, maxSeconds float64) (*audio.PCM, float64, error) {
	c.decodes.Add(1)
	return c.Decoder.Decode(ctx, data, maxSeconds)
}

func (c *countingAudio) Duration(ctx context.Context, data []byte) (float64, error) {
	return c.Decoder.(audio.Durationer).Duration(ctx, data)
}

// ffmpegFile renders a lavfi source into the folder dir with ffmpeg.
func ffmpegFile(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed: media measuring not tested (make deps installs it on Debian)")
	}
	args = append(append([]string{"-loglevel", "error", "-y"}, args...), filepath.Join(dir, name))
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
}

// TestMediaMeasuredBeforeDecoding: a video or audio part whose probe says
// the prompt cannot be under --max-seq-len skips its row, naming the
// line, without a single frame or sample decoded; a row that fits is
// decoded as before.
func TestMediaMeasuredBeforeDecoding(t *testing.T) {
	enc, dir := mediaEncoder(t, train.SFT)
	// 40 s at 64x64: 32 sampled frames (2 fps, at most 32) of the frame
	// budget each, far beyond a 256-token row.
	ffmpegFile(t, dir, "long.mp4", "-f", "lavfi", "-i", "testsrc=duration=40:size=64x64:rate=2", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	ffmpegFile(t, dir, "short.mp4", "-f", "lavfi", "-i", "testsrc=duration=0.5:size=64x64:rate=2", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	ffmpegFile(t, dir, "long.m4a", "-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-c:a", "aac")
	vs := &countingVideo{Source: video.Platform}
	as := &countingAudio{Decoder: audio.Platform}
	video.Platform, audio.Platform = vs, as
	t.Cleanup(func() { video.Platform, audio.Platform = vs.Source, as.Decoder })

	row := func(kind, file string) string {
		return `{"messages": [{"role": "user", "content": [{"type": "` + kind + `", "` + kind + `": "` + file + `"}, {"type": "text", "text": "What is it?"}]}, {"role": "assistant", "content": "A test card."}]}`
	}
	enc.MaxLen = 256
	lines := row("video", "long.mp4") + "\n" + row("audio", "long.m4a") + "\n" +
		`{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}` + "\n"
	split, err := ReadSplit(context.Background(), strings.NewReader(lines), "train.jsonl", enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(split.Rows) != 1 || split.Notes.Skipped != 2 {
		t.Fatalf("%d rows kept, notes %+v", len(split.Rows), split.Notes)
	}
	for i, want := range []string{"train.jsonl:1: the prompt with its media is at least", "train.jsonl:2: the prompt with its media is at least"} {
		if !strings.HasPrefix(split.Notes.First[i], want) || !strings.Contains(split.Notes.First[i], "measured before decoding") {
			t.Errorf("note %q, want %q…", split.Notes.First[i], want)
		}
	}
	if vs.probes.Load() == 0 || vs.decodes.Load() != 0 || as.decodes.Load() != 0 {
		t.Fatalf("probes %d, frame decodes %d, audio decodes %d: want probes and no decode", vs.probes.Load(), vs.decodes.Load(), as.decodes.Load())
	}

	// An image: its header's size gives its soft tokens (the note says
	// "at least": counted before decoding).
	enc.MaxLen = 6 // the tiny model's image budget is 6 soft tokens
	if _, note, ok, err := enc.Encode(context.Background(), []byte(row("image", "photos/bird.png"))); err != nil || ok ||
		!strings.Contains(note, "is at least") {
		t.Errorf("an image over the limit: ok %v, note %q, %v", ok, note, err)
	}

	// Under a limit they fit: measured, then decoded for the row.
	enc.MaxLen = 4096
	ok := encodeOne(t, enc, row("video", "short.mp4"))
	if vs.decodes.Load() == 0 || ok.PromptLen == 0 {
		t.Fatalf("a short video: %d frame decodes, prompt %d", vs.decodes.Load(), ok.PromptLen)
	}
	if _, err := os.Stat(filepath.Join(dir, "long.mp4")); err != nil {
		t.Fatal(err)
	}
}
