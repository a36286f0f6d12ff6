package video

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"perch/media/internal/ffmpeg"
)

var ctx = context.Background()

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make test installs it on Debian): skipping", tool)
		}
	}
}

func ffmpegMake(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	full := append([]string{"-v", "error", "-y"}, args...)
	if out, err := exec.Command("ffmpeg", append(full, p)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSampleTimes(t *testing.T) {
	if got := SampleTimes(10, 2, 32); len(got) != 20 || got[1] != 0.5 || got[19] != 9.5 {
		t.Fatalf("10 s: %v", got)
	}
	got := SampleTimes(60, 2, 32) // 120 candidates -> 32 spread over 0..59.5 s
	if len(got) != 32 || got[0] != 0 || got[31] != 59.5 {
		t.Fatalf("60 s: %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not increasing: %v", got)
		}
	}
	if got := SampleTimes(0.2, 2, 32); !reflect.DeepEqual(got, []float64{0}) {
		t.Fatalf("short: %v", got)
	}
	if got := SampleTimes(math.NaN(), 2, 32); len(got) != 1 {
		t.Fatalf("NaN: %v", got)
	}
	for _, c := range []struct {
		t    float64
		want string
	}{{0, "00:00"}, {9.5, "00:09"}, {61.2, "01:01"}, {3725, "62:05"}} {
		if s := Stamp(c.t); s != c.want {
			t.Errorf("Stamp(%v) = %q, want %q", c.t, s, c.want)
		}
	}
}

// A 10 s MP4 whose brightness encodes time (Y = 20·t) and a 440 Hz track:
// the right frames are picked, stamped, and the audio is heard.
func TestTenSecondMP4WithAudio(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	data := ffmpegMake(t, "clip.mp4",
		"-f", "lavfi", "-i", "nullsrc=s=160x120:r=30:d=10,geq=lum='16+20*T':cb=128:cr=128",
		"-f", "lavfi", "-i", "sine=frequency=440:duration=10:sample_rate=44100",
		"-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest")
	v, err := Decode(ctx, data, Options{Audio: true})
	if err != nil {
		t.Fatal(err)
	}
	in := v.Info
	if in.Width != 160 || in.Height != 120 || in.Rotation != 0 || math.Abs(in.FPS-30) > 0.01 || math.Abs(in.Duration-10) > 0.1 || !in.HasAudio {
		t.Fatalf("info %+v", in)
	}
	if len(v.Frames) != 20 {
		t.Fatalf("%d frames, want 20 (2 fps)", len(v.Frames))
	}
	for i, f := range v.Frames {
		if f.Time != float64(i)/2 || f.Stamp != Stamp(f.Time) || f.Image.W != 160 || f.Image.H != 120 {
			t.Fatalf("frame %d: %v %q %dx%d", i, f.Time, f.Stamp, f.Image.W, f.Image.H)
		}
		// Limited-range Y 16+20t shows as gray (20t)·255/219.
		want := 20 * f.Time * 255 / 219
		got := float64(f.Image.At(80, 60)[0])
		if math.Abs(got-want) > 4 {
			t.Errorf("frame at %.1f s has gray %v, want about %.1f (wrong frame picked?)", f.Time, got, want)
		}
	}
	if v.Frames[19].Stamp != "00:09" {
		t.Errorf("last stamp %q", v.Frames[19].Stamp)
	}
	if v.Audio == nil || len(v.Audio.Clips) != 1 {
		t.Fatal("no audio track")
	}
	clip := v.Audio.Clips[0]
	if d := float64(len(clip)) / 16000; math.Abs(d-10) > 0.1 {
		t.Fatalf("audio %.2f s", d)
	}
	var re, im float64
	for i, s := range clip[16000:144000] {
		ph := 2 * math.Pi * 440 * float64(i+16000) / 16000
		re += float64(s) * math.Cos(ph)
		im += float64(s) * math.Sin(ph)
	}
	if amp := 2 * math.Hypot(re, im) / 128000; amp < 0.08 {
		t.Errorf("440 Hz amplitude %.3f: the tone is missing", amp)
	}
}

// A landscape recording whose display matrix turns it 90° clockwise (how a
// phone stores a portrait video; ffprobe reports rotation -90): frames come
// out upright and portrait. (ffmpeg 5.1 writes that matrix for rotate=-90.)
func TestPortraitMOV(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	// Red top-left quadrant on a blue frame, stored 160x90.
	src := ffmpegMake(t, "land.mp4", "-f", "lavfi", "-i",
		"color=c=blue:s=160x90:r=10:d=2,drawbox=x=0:y=0:w=80:h=45:color=red:t=fill",
		"-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv444p")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.mp4"), filepath.Join(dir, "portrait.mov")
	os.WriteFile(in, src, 0o600)
	if msg, err := exec.Command("ffmpeg", "-v", "error", "-i", in, "-c", "copy", "-metadata:s:v:0", "rotate=-90", out).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, msg)
	}
	data, _ := os.ReadFile(out)
	v, err := Decode(ctx, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Info.Rotation != 90 || v.Info.Width != 90 || v.Info.Height != 160 || v.Info.Format != "mov" {
		t.Fatalf("info %+v", v.Info)
	}
	f := v.Frames[0].Image
	if f.W != 90 || f.H != 160 {
		t.Fatalf("frame %dx%d", f.W, f.H)
	}
	// Rotated clockwise, the stored top-left (red) lands top-right.
	if p := f.At(70, 20); p[0] < 200 || p[2] > 60 {
		t.Errorf("top-right is %v, want red", p)
	}
	if p := f.At(20, 20); p[2] < 200 || p[0] > 60 {
		t.Errorf("top-left is %v, want blue", p)
	}
}

func TestWebMAndLongVideo(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	data := ffmpegMake(t, "long.webm", "-f", "lavfi", "-i", "testsrc=s=64x48:r=5:d=40", "-c:v", "libvpx", "-b:v", "100k", "-deadline", "realtime")
	v, err := Decode(ctx, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Frames) != 32 || v.Info.Format != "webm" || v.Audio != nil {
		t.Fatalf("%d frames, %+v", len(v.Frames), v.Info)
	}
	if last := v.Frames[31]; last.Time < 39 || last.Stamp != "00:39" {
		t.Fatalf("last frame %v %q", last.Time, last.Stamp)
	}
}

func TestAudioOnlyAndNotVideo(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	data := ffmpegMake(t, "voice.webm", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "libopus")
	if _, err := Decode(ctx, data, Options{}); !errors.Is(err, ErrNoVideo) {
		t.Fatalf("audio-only webm: %v", err)
	}
	if _, err := Decode(ctx, []byte("\x89PNG\r\n\x1a\n...."), Options{}); err == nil {
		t.Fatal("png accepted as video")
	}
	if _, err := Decode(ctx, []byte("\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isomgarbage"), Options{}); err == nil {
		t.Fatal("truncated mp4 accepted")
	}
}

func FuzzProbeOutput(f *testing.F) {
	f.Add([]byte(`{"streams":[{"index":0,"codec_type":"video","width":1920,"height":1080,"avg_frame_rate":"30000/1001","duration":"10.0","nb_frames":"300","side_data_list":[{"side_data_type":"Display Matrix","rotation":-90}]},{"index":1,"codec_type":"audio","sample_rate":"48000","channels":2}],"format":{"duration":"10.01"}}`))
	f.Add([]byte(`{"streams":[{"codec_type":"video","width":0,"height":-5,"avg_frame_rate":"1/0","tags":{"rotate":"450"}}],"format":{"duration":"nan"}}`))
	f.Add([]byte(`{"streams":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ffmpeg.ParseProbe(b)
		if err != nil {
			return
		}
		info, err := infoFromProbe(p)
		if err != nil {
			return
		}
		if info.Width <= 0 || info.Height <= 0 || info.Width > 16384 || info.Height > 16384 ||
			info.Rotation%90 != 0 || info.Rotation < 0 || info.Rotation >= 360 || info.Duration < 0 || info.Duration > MaxDuration ||
			math.IsNaN(info.FPS) || info.FPS < 0 {
			t.Fatalf("accepted %+v", info)
		}
		if n := len(SampleTimes(info.Duration, 2, 32)); n < 1 || n > 32 {
			t.Fatalf("%d sample times", n)
		}
	})
}
