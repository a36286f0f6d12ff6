// Package inspect reports what Gemma-4 would get from a media file and
// writes the preprocessed inputs to disk (PNG and .npy) for comparison with
// the reference outside Go; it backs `perch media inspect|preprocess`.
package inspect

import (
	"context"
	"errors"
	"fmt"

	"perch/media/audio"
	"perch/media/logmel"
	"perch/media/picture"
	"perch/media/sniff"
	"perch/media/video"
	"perch/media/vision"
)

// Options are the model numbers the report assumes (Gemma-4 defaults).
type Options struct {
	MaxSoftTokens   int // image budget (280)
	FrameSoftTokens int // per video frame (70)
	PatchSize       int // 16
	PoolingKernel   int // 3
	AudioMsPerToken int // 40
	AudioMaxTokens  int // 750
	Video           video.Options
	Audio           audio.Options
}

// Defaults fills zero fields with Gemma-4's values.
func (o Options) Defaults() Options {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxSoftTokens, 280)
	set(&o.FrameSoftTokens, 70)
	set(&o.PatchSize, 16)
	set(&o.PoolingKernel, 3)
	set(&o.AudioMsPerToken, 40)
	set(&o.AudioMaxTokens, 750)
	return o
}

func (o Options) vision(budget int, t vision.Tower) vision.Params {
	return vision.Params{MaxSoftTokens: budget, PatchSize: o.PatchSize, PoolingKernel: o.PoolingKernel, Tower: t}
}

// Size is a width and height.
type Size struct {
	W int `json:"width"`
	H int `json:"height"`
}

// Report describes one file.
type Report struct {
	Kind   string       `json:"kind"`
	Format string       `json:"format"`
	MIME   string       `json:"mime"`
	Bytes  int          `json:"bytes"`
	Image  *ImageReport `json:"image,omitempty"`
	Audio  *AudioReport `json:"audio,omitempty"`
	Video  *VideoReport `json:"video,omitempty"`
	Notice string       `json:"notice,omitempty"`
}

// ImageReport: the stored image and the model's view of it.
type ImageReport struct {
	Stored        Size   `json:"stored"`
	Orientation   int    `json:"exif_orientation"`
	Upright       Size   `json:"upright"`
	Frames        int    `json:"frames,omitempty"`
	MaxSoftTokens int    `json:"max_soft_tokens"`
	Target        Size   `json:"target"`
	Branch        string `json:"resize_branch"`
	SoftTokens    int    `json:"soft_tokens"`
	SigLIPPatches int    `json:"siglip_patches"` // real 16-px patches
	SigLIPRows    int    `json:"siglip_rows"`    // padded
	UnifiedRows   int    `json:"unified_rows"`   // padded 48-px patches
}

// AudioReport: the source and the 16 kHz clips.
type AudioReport struct {
	SampleRate int          `json:"sample_rate"`
	Channels   int          `json:"channels"`
	Duration   float64      `json:"duration_s"`
	Clips      []ClipReport `json:"clips"`
}

// ClipReport: one ≤30 s clip.
type ClipReport struct {
	Samples            int `json:"samples_16k"`
	SoftTokens         int `json:"soft_tokens"` // mlx-vlm's placeholder count
	MelFrames          int `json:"mel_frames"`
	ValidMelFrames     int `json:"valid_mel_frames"`
	EncoderFrames      int `json:"encoder_frames"`
	ValidEncoderFrames int `json:"valid_encoder_frames"`
	UnifiedRows        int `json:"unified_rows"`
}

// VideoReport: the probe and the sampling plan.
type VideoReport struct {
	Duration        float64       `json:"duration_s"`
	Size            Size          `json:"display"`
	Rotation        int           `json:"rotation"`
	FPS             float64       `json:"fps"`
	FrameCount      int           `json:"frame_count,omitempty"`
	Sampled         []SampledTime `json:"sampled"`
	FrameTarget     Size          `json:"frame_target"`
	FrameSoftTokens int           `json:"frame_soft_tokens"`
	SoftTokens      int           `json:"soft_tokens"` // all frames
	Audio           *AudioReport  `json:"audio,omitempty"`
}

// SampledTime is one planned frame.
type SampledTime struct {
	Time  float64 `json:"t"`
	Stamp string  `json:"stamp"`
}

// Inspect describes data without writing anything.
func Inspect(ctx context.Context, data []byte, o Options) (*Report, error) {
	o = o.Defaults()
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, err
	}
	r := &Report{Kind: t.Kind.String(), Format: string(t.Format), MIME: t.MIME, Bytes: len(data)}
	switch t.Kind {
	case sniff.Image:
		img, info, err := picture.Decode(ctx, data, picture.DefaultLimits)
		if err != nil {
			return nil, err
		}
		r.Image, err = imageReport(img, info, o)
		return r, err
	case sniff.Audio:
		a, err := audio.Decode(ctx, data, o.Audio)
		if err != nil {
			return nil, err
		}
		r.Audio, r.Notice, err = audioReport(a, o)
		return r, err
	default:
		info, err := video.Probe(ctx, data)
		if errors.Is(err, video.ErrNoVideo) { // an audio-only MP4/WebM: treat as audio
			a, aerr := audio.Decode(ctx, data, o.Audio)
			if aerr != nil {
				return nil, aerr
			}
			r.Kind = sniff.Audio.String()
			r.Audio, r.Notice, err = audioReport(a, o)
			return r, err
		}
		if err != nil {
			return nil, err
		}
		r.Video, r.Notice, err = videoReport(ctx, data, info, o)
		return r, err
	}
}

func imageReport(img *picture.RGB, info picture.Info, o Options) (*ImageReport, error) {
	p := o.vision(o.MaxSoftTokens, vision.SigLIP)
	t, err := vision.TargetSize(img.W, img.H, p)
	if err != nil {
		return nil, err
	}
	k2 := o.PoolingKernel * o.PoolingKernel
	rep := &ImageReport{Stored: Size{info.Width, info.Height}, Orientation: info.Orientation, Upright: Size{img.W, img.H},
		MaxSoftTokens: o.MaxSoftTokens, Target: Size{t.W, t.H}, Branch: t.Branch, SoftTokens: t.SoftTokens,
		SigLIPPatches: t.SoftTokens * k2, SigLIPRows: max(t.SoftTokens*k2, o.MaxSoftTokens*k2),
		UnifiedRows: max(t.SoftTokens, o.MaxSoftTokens)}
	if info.Frames > 1 {
		rep.Frames = info.Frames
	}
	return rep, nil
}

func audioReport(a *audio.Audio, o Options) (*AudioReport, string, error) {
	e, err := logmel.New(logmel.Gemma4)
	if err != nil {
		return nil, "", err
	}
	rep := &AudioReport{SampleRate: a.Info.Rate, Channels: a.Info.Channels, Duration: a.Info.Duration}
	for _, clip := range a.Clips {
		f, err := e.Compute(clip)
		if err != nil {
			return nil, "", err
		}
		enc, encValid := logmel.EncoderFrames(f.Mask)
		_, rows := logmel.UnifiedRows(clip, 640)
		rep.Clips = append(rep.Clips, ClipReport{Samples: len(clip),
			SoftTokens: logmel.SoftTokens(len(clip), audio.SampleRate, o.AudioMsPerToken, o.AudioMaxTokens),
			MelFrames:  f.Frames, ValidMelFrames: f.Valid(), EncoderFrames: enc, ValidEncoderFrames: encValid,
			UnifiedRows: rows})
	}
	return rep, a.Notice, nil
}

func videoReport(ctx context.Context, data []byte, info video.Info, o Options) (*VideoReport, string, error) {
	vo := o.Video.WithDefaults()
	times := video.SampleTimes(info.Duration, vo.FPS, vo.MaxFrames)
	w, h := video.FrameSize(info.Width, info.Height, vo.MaxSide)
	t, err := vision.TargetSize(w, h, o.vision(o.FrameSoftTokens, vision.SigLIP))
	if err != nil {
		return nil, "", err
	}
	rep := &VideoReport{Duration: info.Duration, Size: Size{info.Width, info.Height}, Rotation: info.Rotation, FPS: info.FPS,
		FrameCount: info.Frames, FrameTarget: Size{t.W, t.H}, FrameSoftTokens: t.SoftTokens, SoftTokens: t.SoftTokens * len(times)}
	for _, tm := range times {
		rep.Sampled = append(rep.Sampled, SampledTime{tm, video.Stamp(tm)})
	}
	var notice string
	if info.HasAudio {
		a, err := audio.Decode(ctx, data, o.Audio)
		if err != nil && !errors.Is(err, audio.ErrNoAudio) {
			return nil, "", fmt.Errorf("video audio track: %w", err)
		}
		if a != nil {
			if rep.Audio, notice, err = audioReport(a, o); err != nil {
				return nil, "", err
			}
		}
	}
	return rep, notice, nil
}
