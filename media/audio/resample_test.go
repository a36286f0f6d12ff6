package audio

import (
	"math"
	"testing"
)

func db(x float64) float64 { return 20 * math.Log10(x) }

// Passband flat, stopband deep: the properties that make it band-limited.
func TestResamplerResponse(t *testing.T) {
	for _, from := range []int{44100, 48000, 22050, 11025, 96000} {
		for _, f := range []float64{100, 1000, 4000, 7000, 9000, 12000, 15000} {
			if f >= float64(from)/2 {
				continue
			}
			in := sine(from, from, f, 0.5) // 1 s
			out := Resample(in, from, 16000)
			if len(out) != 16000 {
				t.Fatalf("%d Hz: %d samples", from, len(out))
			}
			// An input tone above 8 kHz would alias to |16000 - f| (mod 16000).
			alias := math.Abs(math.Mod(f, 16000))
			if alias > 8000 {
				alias = 16000 - alias
			}
			amp := amplitudeAt(out, 16000, alias)
			gain := db(amp / 0.5)
			switch {
			case f <= 7000 && math.Abs(gain) > 0.1:
				t.Errorf("%d Hz, %.0f Hz tone: passband gain %.3f dB", from, f, gain)
			case f >= 9000 && gain > -80:
				t.Errorf("%d Hz, %.0f Hz tone: only %.1f dB down at its alias %.0f Hz", from, f, gain, alias)
			}
		}
	}
}

func TestUpsampling(t *testing.T) {
	out := Resample(sine(8000, 8000, 1000, 0.5), 8000, 16000)
	if len(out) != 16000 {
		t.Fatalf("%d samples", len(out))
	}
	if g := db(amplitudeAt(out, 16000, 1000) / 0.5); math.Abs(g) > 0.1 {
		t.Errorf("1 kHz gain %.3f dB", g)
	}
	if img := db(amplitudeAt(out, 16000, 7000) / 0.5); img > -80 {
		t.Errorf("image at 7 kHz only %.1f dB down", img)
	}
}

func TestResampleIdentityAndOddRates(t *testing.T) {
	in := sine(1000, 16000, 300, 0.3)
	out := Resample(in, 16000, 16000)
	for i := range in {
		if in[i] != out[i] {
			t.Fatal("identity changed samples")
		}
	}
	// A prime rate: no exact small ratio, still a clean tone.
	o := Resample(sine(44101, 44101, 1000, 0.5), 44101, 16000)
	if g := db(amplitudeAt(o, 16000, 1000) / 0.5); math.Abs(g) > 0.1 || len(o) != 16000 {
		t.Errorf("44101 Hz: %d samples, gain %.3f dB", len(o), g)
	}
}
