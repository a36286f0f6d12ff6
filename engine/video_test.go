package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// makeVideo renders a short test clip with ffmpeg (lavfi sources).
func makeVideo(t *testing.T, seconds string, audio bool) []byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed: video tests skipped (make test installs it on Debian)")
	}
	out := filepath.Join(t.TempDir(), "clip.mp4")
	args := []string{"-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=" + seconds + ":size=192x128:rate=10"}
	if audio {
		args = append(args, "-f", "lavfi", "-i", "sine=frequency=440:duration="+seconds, "-c:a", "aac", "-shortest")
	}
	args = append(args, "-c:v", "libx264", "-pix_fmt", "yuv420p", out)
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestVideoSplicesFramesAndAudio: a 2 s clip at 2 fps becomes four frame
// runs "mm:ss <boi> video*n <eoi>" joined by spaces, then the audio run.
func TestVideoSplicesFramesAndAudio(t *testing.T) {
	clip := makeVideo(t, "2", true)
	e := openTiny(t, "text-tiny", Options{})
	req := Request{PromptIDs: []int32{2, 123, videoID(e), 270}, MaxTokens: 3, IgnoreEOS: true,
		Messages: []Message{{Role: RoleUser, Content: []Part{{Type: PartVideo, Data: clip}}}}}
	j, err := e.prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	v := j.prep.Media[0]
	if len(v.Frames) != 4 || v.Stamps[0] != "00:00" || v.Track == nil || len(j.prep.Media) != 2 || j.prep.Media[1].Media != v.Track {
		t.Fatalf("frames %d, stamps %v, audio track %v", len(v.Frames), v.Stamps, v.Track != nil)
	}
	// Rebuild the expected ids from the parts, in the reference's layout.
	want := []int32{2, 123}
	for i, n := range v.Tokens {
		sep := v.Stamps[i] + " "
		if i > 0 {
			sep = " " + sep
		}
		want = append(want, e.tok.Encode(sep, false)...)
		want = append(want, e.cfg.BOITokenID)
		for k := 0; k < n; k++ {
			want = append(want, videoID(e))
		}
		want = append(want, e.cfg.EOITokenID)
	}
	want = append(want, e.cfg.BOATokenID)
	for k := 0; k < v.Track.AudioTokens; k++ {
		want = append(want, e.cfg.AudioTokenID)
	}
	want = append(want, e.cfg.EOATokenID, 270)
	if len(j.prompt) != len(want) {
		t.Fatalf("prompt has %d ids, want %d", len(j.prompt), len(want))
	}
	for i := range want {
		if j.prompt[i] != want[i] {
			t.Fatalf("id %d: %d, want %d", i, j.prompt[i], want[i])
		}
	}
	if j.prep.ByKind["video"] == 0 || j.prep.ByKind["audio"] != v.Track.AudioTokens || len(j.prep.Media) != 2 {
		t.Fatalf("layout kinds %v, items %d", j.prep.ByKind, len(j.prep.Media))
	}
	ch, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, last := collect(t, ch); last.Kind != EventDone || len(got) != 3 {
		t.Fatalf("video generation: %v %+v", got, last.Err)
	}
}

// TestVideoWithoutVideoStream: an MP4 holding only sound, or a WAV, sent as
// a video is refused with a clear error.
func TestVideoWithoutVideoStream(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed: video tests skipped (make test installs it on Debian)")
	}
	out := filepath.Join(t.TempDir(), "sound.mp4")
	if b, err := exec.Command("ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	soundOnly, _ := os.ReadFile(out)
	e := openTiny(t, "text-tiny", Options{})
	for name, data := range map[string][]byte{"audio-only mp4": soundOnly, "wav": silentWAV(16000)} {
		_, err := e.Generate(context.Background(), Request{PromptIDs: []int32{2, videoID(e)},
			Messages: []Message{{Role: RoleUser, Content: []Part{{Type: PartVideo, Data: data}}}}})
		if err == nil {
			t.Errorf("%s accepted as a video", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
}

// videoID is the model's video placeholder: config's video_token_id, else
// the tokenizer's <|video|>.
func videoID(e *Engine) int32 {
	if e.cfg.VideoTokenID != 0 {
		return e.cfg.VideoTokenID
	}
	id, _ := e.tok.TokenID("<|video|>")
	return id
}
