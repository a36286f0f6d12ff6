package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"perch/media/npy"
)

var ctx = context.Background()

func decodeOK(t *testing.T, b []byte, opts Options) *Audio {
	t.Helper()
	a, err := Decode(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The fixture WAV (16 kHz mono PCM16) decodes bit-exactly to the reference
// waveform (int16 / 32768).
func TestGoldenWaveform(t *testing.T) {
	a := decodeOK(t, readFile(t, "testdata/audio-tiny/audio.wav"), Options{})
	want, err := npy.ReadFile("testdata/audio-tiny/waveform.npy")
	if err != nil {
		t.Fatal(err)
	}
	got := a.Clips[0]
	if len(a.Clips) != 1 || len(got) != len(want.F32) || a.Notice != "" {
		t.Fatalf("%d clips, %d samples (want %d), notice %q", len(a.Clips), len(got), len(want.F32), a.Notice)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want.F32[i]) {
			t.Fatalf("sample %d: %v, want %v", i, got[i], want.F32[i])
		}
	}
}

func TestFloat32WAV(t *testing.T) {
	src := sine(16000, 16000, 440, 0.5)
	src[5] = float32(math.NaN())
	a := decodeOK(t, wavBytes(fmtFloat, 1, 16000, 32, float32LE(src)), Options{})
	got := a.Clips[0]
	for i, v := range got {
		want := src[i]
		if i == 5 {
			want = 0 // NaN samples become silence
		}
		if v != want {
			t.Fatalf("sample %d: %v, want %v", i, v, want)
		}
	}
}

func TestFloat32WAVFromSox(t *testing.T) {
	need(t, "sox")
	p := tmp(t, "f.wav")
	run(t, "sox", "-n", "-r", "16000", "-e", "floating-point", "-b", "32", p, "synth", "1", "sine", "1000", "vol", "0.5")
	a := decodeOK(t, readFile(t, p), Options{})
	if n := len(a.Clips[0]); n != 16000 {
		t.Fatalf("%d samples", n)
	}
	if amp := amplitudeAt(a.Clips[0], 16000, 1000); math.Abs(amp-0.5) > 0.01 {
		t.Fatalf("1 kHz amplitude %.4f, want 0.5", amp)
	}
}

func TestPCMBitDepths(t *testing.T) {
	// One sample at half scale, per depth.
	cases := map[int][]byte{
		8:  {192},
		16: binary.LittleEndian.AppendUint16(nil, 0x4000),
		24: {0, 0, 0x40},
		32: binary.LittleEndian.AppendUint32(nil, 0x40000000),
	}
	for bits, data := range cases {
		a := decodeOK(t, wavBytes(fmtPCM, 1, 16000, bits, data), Options{})
		if got := a.Clips[0][0]; got != 0.5 {
			t.Errorf("%d-bit: %v, want 0.5", bits, got)
		}
	}
}

// Speech from espeak-ng made stereo at 44.1 kHz by sox: our 16 kHz mono must
// match sox's own very-high-quality resample of the same speech.
func TestStereo44kSpeech(t *testing.T) {
	need(t, "espeak-ng", "sox")
	speech, stereo, ref := tmp(t, "s.wav"), tmp(t, "st.wav"), tmp(t, "ref.wav")
	run(t, "espeak-ng", "-v", "en-us", "-w", speech, "Hello from Perch. This is a test of the audio path.")
	run(t, "sox", speech, "-r", "44100", "-c", "2", "-b", "16", stereo)
	run(t, "sox", stereo, "-r", "16000", "-c", "1", "-e", "floating-point", "-b", "32", ref, "rate", "-v")
	a := decodeOK(t, readFile(t, stereo), Options{})
	if a.Info.Rate != 44100 || a.Info.Channels != 2 {
		t.Fatalf("info %+v", a.Info)
	}
	want := decodeOK(t, readFile(t, ref), Options{}).Clips[0]
	got := a.Clips[0]
	if d := len(got) - len(want); d < -2 || d > 2 {
		t.Fatalf("%d samples, sox made %d", len(got), len(want))
	}
	n := min(len(got), len(want))
	var num, den float64
	for i := 0; i < n; i++ {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	snr := 10 * math.Log10(den/num)
	t.Logf("%.2f s of speech, %d samples; SNR vs sox rate -v: %.1f dB", a.Info.Duration, len(got), snr)
	if snr < 40 {
		t.Fatalf("resampled speech differs from sox's: SNR %.1f dB", snr)
	}
}

func TestCompressedContainers(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	for _, c := range []struct{ ext, codec string }{{"mp3", "libmp3lame"}, {"m4a", "aac"}, {"flac", "flac"},
		{"opus", "libopus"}, {"aiff", "pcm_s16be"}, {"caf", "pcm_s16le"}} {
		p := tmp(t, "tone."+c.ext)
		rate := "44100"
		if c.ext == "opus" {
			rate = "48000" // Opus runs at 48 kHz
		}
		run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:duration=2:sample_rate="+rate,
			"-ac", "2", "-c:a", c.codec, "-b:a", "128k", p)
		a := decodeOK(t, readFile(t, p), Options{})
		got := a.Clips[0]
		if a.Info.Channels != 2 || strconv.Itoa(a.Info.Rate) != rate || math.Abs(float64(len(got))/16000-2) > 0.1 {
			t.Errorf("%s: info %+v, %.3f s", c.ext, a.Info, float64(len(got))/16000)
			continue
		}
		// lavfi's sine is 1/8 of full scale; the encoders' stereo paths land it near -21 dBFS.
		on, off := amplitudeAt(got, 16000, 1000), amplitudeAt(got, 16000, 3000)
		t.Logf("%s: %.3f s, 1 kHz amplitude %.4f, 3 kHz %.5f", c.ext, float64(len(got))/16000, on, off)
		if on < 0.07 || on > 0.13 || off > 0.002 {
			t.Errorf("%s: tone amplitude %.4f (want 0.07-0.13), leakage %.5f", c.ext, on, off)
		}
	}
}

func TestLongAudioIsCutVisiblyOrSplit(t *testing.T) {
	data := make([]byte, 70*8000) // 70 s of 8-bit silence at 8 kHz
	for i := range data {
		data[i] = 128
	}
	w := wavBytes(fmtPCM, 1, 8000, 8, data)
	a := decodeOK(t, w, Options{})
	if len(a.Clips) != 1 || len(a.Clips[0]) != 30*16000 || !strings.Contains(a.Notice, "first 30.0 s of 1:10") {
		t.Fatalf("%d clips, %d samples, notice %q", len(a.Clips), len(a.Clips[0]), a.Notice)
	}
	s := decodeOK(t, w, Options{Split: true})
	if len(s.Clips) != 3 || len(s.Clips[2]) != 10*16000 || s.Notice != "" {
		t.Fatalf("split: %d clips, notice %q", len(s.Clips), s.Notice)
	}
}

// A header claiming 30 minutes decodes only the first 30 s: allocation stays
// near what 30 s needs, not what the header claims.
func TestHugeHeaderStaysSmall(t *testing.T) {
	w := wavBytes(fmtPCM, 1, 8000, 16, make([]byte, 30*60*8000*2))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := decodeOK(t, w, Options{})
	runtime.ReadMemStats(&after)
	if len(a.Clips[0]) != 30*16000 {
		t.Fatalf("%d samples", len(a.Clips[0]))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("decoding 30 s allocated %d MiB", alloc>>20)
	}
}

func TestBadWAVs(t *testing.T) {
	good := wavBytes(fmtPCM, 1, 16000, 16, make([]byte, 3200))
	patch := func(off int, v uint32, size int) []byte {
		b := append([]byte{}, good...)
		if size == 2 {
			binary.LittleEndian.PutUint16(b[off:], uint16(v))
		} else {
			binary.LittleEndian.PutUint32(b[off:], v)
		}
		return b
	}
	junk := append([]byte{}, good[:12]...)
	for i := 0; i < 200000; i++ {
		junk = append(junk, "JUNK\x00\x00\x00\x00"...)
	}
	bad := map[string][]byte{
		"zero channels":    patch(22, 0, 2),
		"rate 1":           patch(24, 1, 4),
		"rate 4e9":         patch(24, 4000000000, 4),
		"bits 0":           patch(34, 0, 2),
		"bits 12":          patch(34, 12, 2),
		"fmt too short":    patch(16, 12, 4),
		"lying fmt size":   patch(16, 0xfffffff0, 4),
		"extensible short": patch(20, fmtExtensible, 2),
		"no data":          good[:36],
		"no fmt":           append([]byte("RIFF\x00\x00\x00\x00WAVEdata\x04\x00\x00\x00"), 0, 0, 0, 0),
		"too many chunks":  junk,
		"empty data":       wavBytes(fmtPCM, 1, 16000, 16, nil),
	}
	for name, b := range bad {
		if _, err := Decode(ctx, b, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// A streaming writer's 0xFFFFFFFF data size is clamped to the file: it decodes.
	stream := patch(40, 0xffffffff, 4)
	if a, err := Decode(ctx, stream, Options{}); err != nil || len(a.Clips[0]) != 1600 {
		t.Errorf("streaming size: %v", err)
	}
	// An odd-sized chunk is followed by a pad byte; the walk must honour it.
	odd := append(append([]byte{}, good[:36]...), "abcd\x03\x00\x00\x00xyz\x00"...)
	odd = append(odd, good[36:]...)
	if a, err := Decode(ctx, odd, Options{}); err != nil || len(a.Clips[0]) != 1600 {
		t.Errorf("odd chunk with pad: %v", err)
	}
	if _, err := Decode(ctx, []byte("RIFF"), Options{}); err == nil {
		t.Error("4 bytes: no error")
	}
}

func TestUnsupportedWAVEncodingGoesToThePlatform(t *testing.T) {
	need(t, "ffmpeg", "ffprobe")
	p := tmp(t, "ulaw.wav")
	run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=500:duration=1:sample_rate=8000", "-c:a", "pcm_mulaw", p)
	a := decodeOK(t, readFile(t, p), Options{})
	if n := len(a.Clips[0]); n < 15900 || n > 16100 || amplitudeAt(a.Clips[0], 16000, 500) < 0.1 {
		t.Fatalf("µ-law: %d samples, amplitude %.3f", n, amplitudeAt(a.Clips[0], 16000, 500))
	}
}

func TestNotAudio(t *testing.T) {
	if _, err := Decode(ctx, []byte("\x89PNG\r\n\x1a\nxxxxxxxx"), Options{}); err == nil || !strings.Contains(err.Error(), "expected audio") {
		t.Fatalf("png: %v", err)
	}
	var e error = ErrNoAudio
	if !errors.Is(e, ErrNoAudio) {
		t.Fatal("sentinel")
	}
}

func TestEncodeWAVRoundTrip(t *testing.T) {
	src := sine(8000, 16000, 300, 0.7)
	src[3], src[4] = 1.5, -2 // clipped
	b, err := EncodeWAV(src, 16000)
	if err != nil {
		t.Fatal(err)
	}
	a := decodeOK(t, b, Options{})
	got := a.Clips[0]
	if len(got) != len(src) || a.Info.Rate != 16000 || a.Info.Channels != 1 {
		t.Fatalf("%d samples, info %+v", len(got), a.Info)
	}
	for i := range src {
		want := max(-1, min(src[i], 32767.0/32768))
		if d := math.Abs(float64(got[i] - want)); d > 1.0/32768 {
			t.Fatalf("sample %d: %v vs %v", i, got[i], want)
		}
	}
}
