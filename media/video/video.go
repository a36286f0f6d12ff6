// Package video samples a video into frames for Gemma-4's vision path (2 fps,
// at most 32 frames by default, each with its time and "mm:ss" stamp) and
// extracts its audio track as a 16 kHz mono clip. The platform Source reads
// the container: AVFoundation on macOS, ffmpeg/ffprobe elsewhere.
// research/gemma4.md §6 (sampling follows §6.3: timestamps are the actual
// times of the sampled frames).
package video

import (
	"context"
	"errors"
	"fmt"
	"math"

	"perch/media/audio"
	"perch/media/picture"
	"perch/media/sniff"
)

// Info is what a probe finds.
type Info struct {
	Format   sniff.Format
	Duration float64 // seconds
	Width    int     // display size (after rotation)
	Height   int
	Rotation int     // degrees clockwise applied for display: 0, 90, 180, 270
	FPS      float64 // average frame rate (0 if unknown)
	Frames   int     // frame count (0 if unknown)
	HasAudio bool
}

// Frame is one sampled frame.
type Frame struct {
	Image *picture.RGB
	Time  float64 // seconds from the start
	Stamp string  // "mm:ss", as the prompt shows it
}

// Video is a decoded video.
type Video struct {
	Info   Info
	Frames []Frame
	Audio  *audio.Audio // nil without an audio track or when not requested
}

// Options control sampling.
type Options struct {
	FPS       float64 // frames per second to sample; 0 means 2
	MaxFrames int     // 0 means 32; longer videos are sampled uniformly
	// MaxSide bounds the longest side of decoded frames (0 means 1280), so 32
	// frames of a 4K video stay small; the vision resize then applies the
	// reference rule to these frames (70 soft tokens is about 460x350).
	MaxSide int
	Audio   bool          // also extract the audio track
	AudioOp audio.Options // for the audio track
}

// WithDefaults fills zero fields: 2 fps, 32 frames, 1280 px.
func (o Options) WithDefaults() Options {
	if o.FPS <= 0 {
		o.FPS = 2
	}
	if o.MaxFrames <= 0 {
		o.MaxFrames = 32
	}
	if o.MaxSide <= 0 {
		o.MaxSide = 1280
	}
	return o
}

// Source is the platform's video reader.
type Source interface {
	Probe(ctx context.Context, data []byte) (Info, error)
	// Frames decodes the frames shown at times (seconds), upright, scaled to w×h.
	Frames(ctx context.Context, data []byte, times []float64, w, h int) ([]*picture.RGB, error)
}

// Platform is this OS's Source.
var Platform Source = platformSource{}

// ErrNoVideo is returned for a container without a video track.
var ErrNoVideo = errors.New("the file has no video track (audio only?)")

// MaxDuration refuses absurd probe results.
const MaxDuration = 24 * 3600

// Probe describes data without decoding frames.
func Probe(ctx context.Context, data []byte) (Info, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return Info{}, err
	}
	if t.Kind != sniff.Video {
		return Info{}, fmt.Errorf("expected a video but the file is %s", t)
	}
	info, err := Platform.Probe(ctx, data)
	if err != nil {
		return info, err
	}
	info.Format = t.Format
	return info, nil
}

// Decode samples frames (and optionally the audio track) from data.
func Decode(ctx context.Context, data []byte, opts Options) (*Video, error) {
	opts = opts.WithDefaults()
	info, err := Probe(ctx, data)
	if err != nil {
		return nil, err
	}
	times := SampleTimes(info.Duration, opts.FPS, opts.MaxFrames)
	w, h := FrameSize(info.Width, info.Height, opts.MaxSide)
	imgs, err := Platform.Frames(ctx, data, times, w, h)
	if err != nil {
		return nil, err
	}
	v := &Video{Info: info}
	for i, img := range imgs {
		if img == nil {
			continue // past the last decodable frame
		}
		v.Frames = append(v.Frames, Frame{Image: img, Time: times[i], Stamp: Stamp(times[i])})
	}
	if len(v.Frames) == 0 {
		return nil, fmt.Errorf("no frame could be decoded from the %s video", info.Format)
	}
	if opts.Audio && info.HasAudio {
		a, err := audio.Decode(ctx, data, opts.AudioOp)
		if err != nil && !errors.Is(err, audio.ErrNoAudio) {
			return nil, fmt.Errorf("video audio track: %w", err)
		}
		v.Audio = a
	}
	return v, nil
}

// SampleTimes picks frame times: every 1/fps seconds from 0 while inside the
// video (at least one frame); if that is more than maxFrames, maxFrames of
// them evenly spread (numpy.linspace(0, n-1, maxFrames).round()).
func SampleTimes(duration, fps float64, maxFrames int) []float64 {
	if duration <= 0 || math.IsNaN(duration) || duration > MaxDuration {
		return []float64{0}
	}
	n := max(int(math.Ceil(duration*fps-1e-9)), 1)
	idx := make([]int, 0, min(n, maxFrames))
	if n <= maxFrames {
		for i := 0; i < n; i++ {
			idx = append(idx, i)
		}
	} else {
		for j := 0; j < maxFrames; j++ {
			idx = append(idx, int(math.RoundToEven(float64(j)*float64(n-1)/float64(maxFrames-1))))
		}
	}
	out := make([]float64, len(idx))
	for i, k := range idx {
		out[i] = float64(k) / fps
	}
	return out
}

// Stamp formats t as the reference's "mm:ss" (minutes not wrapped).
func Stamp(t float64) string {
	return fmt.Sprintf("%02d:%02d", int(t/60), int(math.Mod(t, 60)))
}

// FrameSize scales w×h so the longest side is at most maxSide, keeping even sizes.
func FrameSize(w, h, maxSide int) (int, int) {
	if w <= 0 || h <= 0 {
		return w, h
	}
	if m := max(w, h); m > maxSide {
		s := float64(maxSide) / float64(m)
		w, h = max(2, int(math.Round(float64(w)*s/2))*2), max(2, int(math.Round(float64(h)*s/2))*2)
	}
	return w, h
}
