// Package audio turns any audio file (or a video's audio track) into what
// Gemma-4's audio path takes: 16 kHz mono float32 samples, at most 30 s per
// clip. WAV is read in Go (go-audio/wav for PCM, float WAV by hand); other
// containers go through the platform Decoder (AVFoundation on macOS, ffmpeg
// elsewhere). Channels are averaged, then a band-limited sinc resampler
// brings the rate to 16 kHz. Audio is cut by duration before resampling.
package audio

import (
	"context"
	"errors"
	"fmt"
	"math"

	"perch/media/sniff"
)

// SampleRate is the rate every Clip has.
const SampleRate = 16000

// PCM is decoded audio at its own rate: interleaved float32 frames.
type PCM struct {
	Rate     int
	Channels int
	Samples  []float32 // [frames][Channels]
}

// Frames is the number of frames in p.
func (p *PCM) Frames() int { return len(p.Samples) / max(p.Channels, 1) }

// Decoder is the platform's decoder for containers Go does not read
// (MP3, M4A/AAC, FLAC, Ogg/Opus, AIFF, CAF and video files).
type Decoder interface {
	// Decode returns up to maxSeconds of data's first audio track, and the
	// track's full duration in seconds (0 if unknown). ErrNoAudio when the
	// file has no audio track.
	Decode(ctx context.Context, data []byte, maxSeconds float64) (*PCM, float64, error)
}

// ErrNoAudio is returned for a file (usually a video) without an audio track.
var ErrNoAudio = fmt.Errorf("the file has no audio track")

// Platform is this OS's Decoder.
var Platform Decoder = platformDecoder{}

// Options control length handling.
type Options struct {
	MaxSeconds float64 // per clip; 0 means 30 (the model's limit: 480000 samples)
	// Split returns consecutive MaxSeconds clips covering up to MaxTotalSeconds
	// instead of only the first clip.
	Split           bool
	MaxTotalSeconds float64 // 0 means 600 (10 minutes) when splitting
}

func (o Options) limits() (clip, total float64) {
	clip = o.MaxSeconds
	if clip <= 0 {
		clip = 30
	}
	total = clip
	if o.Split {
		total = o.MaxTotalSeconds
		if total <= 0 {
			total = 600
		}
	}
	return clip, total
}

// Info describes the source audio.
type Info struct {
	Format   sniff.Format
	Rate     int     // source sample rate
	Channels int     // source channels
	Duration float64 // source duration in seconds (0 if unknown)
}

// Audio is a decoded file ready for feature extraction.
type Audio struct {
	Info  Info
	Clips [][]float32 // 16 kHz mono; one clip unless Options.Split
	// Notice is set when not all of the audio is used; show it to the user.
	Notice string
}

// Decode decodes data (any supported audio or video container) to 16 kHz
// mono clips.
func Decode(ctx context.Context, data []byte, opts Options) (*Audio, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, err
	}
	if t.Kind == sniff.Image {
		return nil, fmt.Errorf("expected audio but the file is %s", t)
	}
	clipSec, totalSec := opts.limits()
	var pcm *PCM
	var duration float64
	if t.Format == sniff.WAV {
		pcm, duration, err = decodeWAV(data, totalSec)
		if errors.Is(err, errWAVEncoding) { // ADPCM, µ-law, …: let the platform try
			pcm, duration, err = Platform.Decode(ctx, data, totalSec)
		}
	} else {
		pcm, duration, err = Platform.Decode(ctx, data, totalSec)
	}
	if err != nil {
		return nil, err
	}
	a, err := FromPCM(pcm, opts)
	if err != nil {
		return nil, err
	}
	a.Info.Format = t.Format
	if duration > 0 {
		a.Info.Duration = duration
	}
	if a.Info.Duration > clipSec+0.001 && (!opts.Split || a.Info.Duration > totalSec+0.001) {
		used := clipSec
		if opts.Split {
			used = totalSec
		}
		a.Notice = fmt.Sprintf("using the first %s of %s of audio", clock(used), clock(a.Info.Duration))
	}
	return a, nil
}

// FromPCM downmixes, resamples and cuts decoded audio into clips.
func FromPCM(p *PCM, opts Options) (*Audio, error) {
	if p.Channels <= 0 || p.Rate < MinRate || p.Rate > MaxRate {
		return nil, fmt.Errorf("audio: bad stream (%d channels at %d Hz)", p.Channels, p.Rate)
	}
	clipSec, totalSec := opts.limits()
	a := &Audio{Info: Info{Rate: p.Rate, Channels: p.Channels, Duration: float64(p.Frames()) / float64(p.Rate)}}
	mono := Resample(Downmix(truncate(p, totalSec)), p.Rate, SampleRate)
	mono = mono[:min(len(mono), int(totalSec*SampleRate))]
	if len(mono) == 0 {
		return nil, fmt.Errorf("the audio is empty")
	}
	step := int(clipSec * SampleRate)
	for start := 0; start < len(mono); start += step {
		a.Clips = append(a.Clips, mono[start:min(start+step, len(mono))])
		if !opts.Split {
			break
		}
	}
	return a, nil
}

// truncate keeps at most seconds of p (plus nothing: cut before resampling).
func truncate(p *PCM, seconds float64) *PCM {
	keep := int(math.Ceil(seconds * float64(p.Rate)))
	if p.Frames() <= keep {
		return p
	}
	return &PCM{Rate: p.Rate, Channels: p.Channels, Samples: p.Samples[:keep*p.Channels]}
}

// Downmix averages the channels (numpy's mean over the channel axis in float32).
func Downmix(p *PCM) []float32 {
	if p.Channels == 1 {
		return p.Samples
	}
	n := p.Frames()
	out := make([]float32, n)
	c := p.Channels
	for i := range out {
		var s float32
		for _, v := range p.Samples[i*c : (i+1)*c] {
			s += v
		}
		out[i] = s / float32(c)
	}
	return out
}

// clock formats seconds as m:ss (or s.s for short clips).
func clock(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.1f s", s)
	}
	t := int(s + 0.5)
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}
