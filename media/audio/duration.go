package audio

import (
	"context"

	"perch/media/sniff"
)

// Durationer is a Decoder that can also read a file's audio duration from
// its container without decoding samples (ffprobe on Linux).
type Durationer interface {
	Duration(ctx context.Context, data []byte) (float64, error)
}

// Duration is data's audio duration in seconds, read from the WAV header or
// the platform's probe without decoding any sample; 0 when that cannot be
// known before decoding (a platform without a probe, ADPCM WAV).
func Duration(ctx context.Context, data []byte) (float64, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return 0, err
	}
	if t.Format == sniff.WAV {
		h, err := parseWAV(data)
		if err != nil {
			return 0, nil // decoding says what is wrong
		}
		if f := h.frameBytes(); f > 0 && h.rate > 0 {
			return float64(len(h.data)/f) / float64(h.rate), nil
		}
		return 0, nil
	}
	if d, ok := Platform.(Durationer); ok {
		return d.Duration(ctx, data)
	}
	return 0, nil
}
