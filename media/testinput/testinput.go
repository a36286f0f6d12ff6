// Package testinput makes deterministic media for tests and benchmarks: a
// picture of exactly 280 soft tokens at Gemma-4's default image budget, and
// a 16 kHz tone as WAV.
package testinput

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"

	"perch/media/audio"
)

// Picture280 is a 960x672 PNG gradient: 280 soft tokens at the default budget.
func Picture280() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 960, 672))
	for y := 0; y < 672; y++ {
		for x := 0; x < 960; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x / 4), uint8(y / 3), uint8((x + y) / 7), 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// ToneWAV is seconds of a 440 Hz tone at 16 kHz as WAV.
func ToneWAV(seconds float64) ([]byte, error) {
	s := make([]float32, int(seconds*16000))
	for i := range s {
		s[i] = 0.3 * float32(math.Sin(2*math.Pi*440*float64(i)/16000))
	}
	return audio.EncodeWAV(s, 16000)
}
