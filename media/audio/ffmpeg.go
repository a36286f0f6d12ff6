package audio

import (
	"context"
	"fmt"
	"strconv"

	"perch/media/internal/ffmpeg"
)

// ProbeFFmpeg is the first audio track's duration in seconds as ffprobe
// reads it from the container (0 if the container does not say).
func ProbeFFmpeg(ctx context.Context, data []byte) (float64, error) {
	in, err := ffmpeg.NewInput(data)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	probe, err := ffmpeg.ProbeInput(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", in.Format, err)
	}
	st := probe.FirstStream("audio")
	if st == nil {
		return 0, ErrNoAudio
	}
	if d := ffmpeg.Seconds(st.Duration); d > 0 {
		return d, nil
	}
	return ffmpeg.Seconds(probe.Format.Duration), nil
}

// DecodeFFmpeg is the ffmpeg decoder (also the macOS fallback for containers
// AVFoundation cannot open, such as WebM and Ogg).
func DecodeFFmpeg(ctx context.Context, data []byte, maxSeconds float64) (*PCM, float64, error) {
	in, err := ffmpeg.NewInput(data)
	if err != nil {
		return nil, 0, err
	}
	defer in.Close()
	probe, err := ffmpeg.ProbeInput(ctx, in)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", in.Format, err)
	}
	st := probe.FirstStream("audio")
	if st == nil {
		return nil, 0, ErrNoAudio
	}
	duration := ffmpeg.Seconds(st.Duration)
	if duration == 0 {
		duration = ffmpeg.Seconds(probe.Format.Duration)
	}
	rate, _ := strconv.Atoi(st.SampleRate)
	if st.Channels < 1 || st.Channels > MaxChannels || rate < MinRate || rate > MaxRate {
		return nil, 0, fmt.Errorf("unsupported audio stream: %d channels at %s Hz", st.Channels, st.SampleRate)
	}
	args := append([]string{"-nostdin", "-v", "error"}, in.Args()...)
	args = append(args, "-map", "0:"+strconv.Itoa(st.Index), "-vn", "-sn", "-dn", "-map_metadata", "-1",
		"-t", strconv.FormatFloat(maxSeconds+0.5, 'f', 3, 64), "-c:a", "pcm_f32le", "-f", "wav", "-")
	maxOut := int64((maxSeconds+1)*float64(rate))*int64(st.Channels)*4 + 1<<20
	out, err := ffmpeg.Run(ctx, "ffmpeg", args, maxOut)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", in.Format, err)
	}
	pcm, _, err := decodeWAV(out, maxSeconds)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", in.Format, err)
	}
	return pcm, duration, nil
}
