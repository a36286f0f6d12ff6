package inspect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"perch/media/npy"
	"perch/media/picture"
)

var ctx = context.Background()

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImage(t *testing.T) {
	data := read(t, "../vision/testdata/vision-tiny/image.png")
	r, err := Inspect(ctx, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	im := r.Image
	if r.Kind != "image" || im.Upright != (Size{144, 96}) || im.Target != (Size{960, 624}) || im.SoftTokens != 260 ||
		im.SigLIPPatches != 2340 || im.SigLIPRows != 2520 || im.UnifiedRows != 280 {
		t.Fatalf("%+v %+v", r, im)
	}
	dir := t.TempDir()
	files, err := Preprocess(ctx, data, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("files %v", files)
	}
	got, _, err := picture.Decode(ctx, read(t, filepath.Join(dir, "resized.png")), picture.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := picture.Decode(ctx, read(t, "../resample/testdata/preprocess/E_144x96_vision_tiny_image.expected_960x624.png"), picture.DefaultLimits)
	if string(got.Pix) != string(want.Pix) {
		t.Fatal("resized.png differs from Pillow's resize")
	}
	for name, shape := range map[string][2]int{"siglip_patches.npy": {2520, 768}, "siglip_positions.npy": {2520, 2},
		"unified_patches.npy": {280, 6912}, "unified_positions.npy": {280, 2}} {
		a, err := npy.ReadFile(filepath.Join(dir, name))
		if err != nil || len(a.Shape) != 2 || a.Shape[0] != shape[0] || a.Shape[1] != shape[1] {
			t.Errorf("%s: %v %v", name, a.Shape, err)
		}
	}
}

func TestAudioMatchesGoldenFeatures(t *testing.T) {
	data := read(t, "../audio/testdata/audio-tiny/audio.wav")
	dir := t.TempDir()
	if _, err := Preprocess(ctx, data, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	r, _ := Inspect(ctx, data, Options{})
	c := r.Audio.Clips[0]
	if c.Samples != 24000 || c.SoftTokens != 38 || c.MelFrames != 150 || c.ValidMelFrames != 149 || c.EncoderFrames != 38 || c.UnifiedRows != 38 {
		t.Fatalf("%+v", c)
	}
	got, err := npy.ReadFile(filepath.Join(dir, "clip0_logmel.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := npy.ReadFile("../logmel/testdata/audio-tiny/input_features.npy")
	for i := range want.F32 {
		if got.F32[i] != want.F32[i] {
			t.Fatalf("logmel[%d] %v vs %v", i, got.F32[i], want.F32[i])
		}
	}
	mask, _ := npy.ReadFile(filepath.Join(dir, "clip0_mask.npy"))
	if len(mask.Bool) != 150 || mask.Bool[149] {
		t.Fatal("mask")
	}
}

func TestVideo(t *testing.T) {
	for _, tool := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: skipping", tool)
		}
	}
	p := filepath.Join(t.TempDir(), "v.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=s=320x240:r=10:d=3",
		"-f", "lavfi", "-i", "sine=d=3", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", p).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	data := read(t, p)
	dir := t.TempDir()
	if _, err := Preprocess(ctx, data, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	r, _ := Inspect(ctx, data, Options{})
	v := r.Video
	if len(v.Sampled) != 6 || v.FrameSoftTokens == 0 || v.SoftTokens != 6*v.FrameSoftTokens || v.Audio == nil {
		t.Fatalf("%+v", v)
	}
	a, err := npy.ReadFile(filepath.Join(dir, "video_patches.npy"))
	if err != nil || a.Shape[0] != 6 || a.Shape[1] != 630 || a.Shape[2] != 768 {
		t.Fatalf("video patches %v %v", a.Shape, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "audio_clip0_logmel.npy")); err != nil {
		t.Fatal(err)
	}
}
