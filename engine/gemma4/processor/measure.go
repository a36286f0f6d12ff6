package processor

import (
	"context"
	"errors"
	"math"

	"perch/engine/gemma4"
	"perch/engine/prompt"
	"perch/media/audio"
	"perch/media/logmel"
	"perch/media/picture"
	"perch/media/video"
	"perch/media/vision"
)

// Measuring media before decoding them: an image's header gives its size,
// a video's probe (ffprobe, or AVFoundation's metadata) its duration and
// frame size, an audio file's header or probe its duration; from those the
// soft tokens follow by the same rules the decoded media get. A prompt
// whose text and media cannot fit PrepareOptions.Context is refused
// before any pixel or sample is decoded (an 8K video would otherwise cost
// minutes of decoding, then be refused).

// leastTokens is a lower bound on the soft tokens part will take, from
// its headers alone; 0 when they do not say.
func (p *Processor) leastTokens(ctx context.Context, part prompt.Part, o PrepareOptions) (int, error) {
	switch part.Type {
	case prompt.Image:
		budget, err := p.imageBudget(o.ImageTokens)
		if err != nil {
			return 0, err
		}
		info, err := picture.Config(part.Data)
		if err != nil {
			return 0, err
		}
		return p.leastImageTokens(info.Width, info.Height, budget), nil
	case prompt.Audio:
		d, err := audio.Duration(ctx, part.Data)
		if err != nil {
			return 0, nil // decoding says what is wrong
		}
		return p.audioTokens(d), nil
	case prompt.Video:
		info, err := video.Probe(ctx, part.Data)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, err
		}
		if err != nil {
			return 0, nil
		}
		vo := video.Options{FPS: o.VideoFPS, MaxFrames: o.MaxFrames}.WithDefaults()
		frames := len(video.SampleTimes(info.Duration, vo.FPS, vo.MaxFrames))
		w, h := video.FrameSize(info.Width, info.Height, vo.MaxSide)
		return frames * p.leastImageTokens(w, h, videoFrameTokens), nil
	}
	return 0, nil
}

// leastImageTokens is the soft tokens of a w×h picture at budget, the
// fewer of its two orientations (EXIF may turn it).
func (p *Processor) leastImageTokens(w, h, budget int) int {
	if p.vision == nil || w <= 0 || h <= 0 {
		return 0
	}
	params := vision.Params{MaxSoftTokens: budget, PatchSize: p.vision.PatchSize, PoolingKernel: p.vision.PoolingKernelSize}
	a, err := vision.TargetSize(w, h, params)
	if err != nil {
		return 0
	}
	b, err := vision.TargetSize(h, w, params)
	if err != nil {
		return 0
	}
	return min(a.SoftTokens, b.SoftTokens)
}

// audioTokens is the placeholder count of seconds of audio (the first 30 s
// are used).
func (p *Processor) audioTokens(seconds float64) int {
	if seconds <= 0 || math.IsNaN(seconds) {
		return 0
	}
	samples := int(math.Min(seconds, 30) * audio.SampleRate)
	return logmel.SoftTokens(samples, audio.SampleRate, p.pc.AudioMsPerToken, p.pc.AudioSeqLength)
}

// mediaTokens are the soft tokens of prepared media.
func mediaTokens(m *gemma4.Media) int {
	n := m.AudioTokens
	for _, t := range m.Tokens {
		n += t
	}
	if m.Track != nil {
		n += mediaTokens(m.Track)
	}
	return n
}
