//go:build !darwin

package audio

import "context"

// platformDecoder decodes through Debian's ffmpeg: the first audio track,
// as float32 WAV on stdout at its own rate and channel count (downmix and
// resampling stay in Go, identical on every platform).
type platformDecoder struct{}

func (platformDecoder) Decode(ctx context.Context, data []byte, maxSeconds float64) (*PCM, float64, error) {
	return DecodeFFmpeg(ctx, data, maxSeconds)
}

// Duration runs ffprobe only.
func (platformDecoder) Duration(ctx context.Context, data []byte) (float64, error) {
	return ProbeFFmpeg(ctx, data)
}
