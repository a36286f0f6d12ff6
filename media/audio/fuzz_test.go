package audio

import (
	"runtime"
	"testing"
)

func FuzzWAV(f *testing.F) {
	f.Add(wavBytes(fmtPCM, 2, 44100, 16, make([]byte, 64)))
	f.Add(wavBytes(fmtPCM, 1, 8000, 8, []byte{1, 2, 3}))
	f.Add(wavBytes(fmtPCM, 3, 48000, 24, make([]byte, 90)))
	f.Add(wavBytes(fmtFloat, 1, 16000, 32, float32LE([]float32{0.5, -1})))
	f.Add(wavBytes(fmtFloat, 1, 16000, 64, make([]byte, 16)))
	f.Add([]byte("RIFF\xff\xff\xff\xffWAVEfmt \x28\x00\x00\x00\xfe\xff\x02\x00\x44\xac\x00\x00\x20\x62\x05\x00\x08\x00\x20\x00\x16\x00\x20\x00\x03\x00\x00\x00\x03\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71data\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		// The Go WAV path only: other codecs go to a child process.
		var a *Audio
		pcm, _, err := decodeWAV(b, 1)
		if err == nil {
			a, err = FromPCM(pcm, Options{MaxSeconds: 1})
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(24*len(b))+8<<20 {
			t.Fatalf("%d input bytes allocated %d", len(b), alloc)
		}
		if err != nil {
			return
		}
		if len(a.Clips) != 1 || len(a.Clips[0]) == 0 || len(a.Clips[0]) > SampleRate {
			t.Fatalf("%d clips, %d samples", len(a.Clips), len(a.Clips[0]))
		}
	})
}
