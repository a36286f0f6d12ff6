//go:build darwin

package video

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"os/exec"
	"sync"
	"time"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/coregraphics"
	"github.com/progrium/darwinkit/macos/coreimage"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"perch/media/internal/apple"
	"perch/media/picture"
	"perch/media/resample"
	"perch/media/sniff"
)

// avExtensions are the video containers AVFoundation opens.
var avExtensions = map[sniff.Format]string{sniff.MP4: "mp4", sniff.MOV: "mov", sniff.M4V: "m4v"}

// platformSource reads MP4/MOV/M4V with AVFoundation (AVURLAsset,
// AVAssetImageGenerator with the track's preferred transform applied) and
// hands WebM/MKV/Ogg to ffmpeg when it is installed.
type platformSource struct{}

func fallback(f sniff.Format) (Source, error) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return nil, fmt.Errorf("%s video needs ffmpeg on macOS (brew install ffmpeg)", f)
	}
	return FFmpeg{}, nil
}

func (platformSource) Probe(ctx context.Context, data []byte) (Info, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return Info{}, err
	}
	ext, ok := avExtensions[t.Format]
	if !ok {
		fb, err := fallback(t.Format)
		if err != nil {
			return Info{}, err
		}
		return fb.Probe(ctx, data)
	}
	path, cleanup, err := apple.TempFile(data, ext)
	if err != nil {
		return Info{}, err
	}
	defer cleanup()
	var info Info
	objc.WithAutoreleasePool(func() { info, err = avProbe(path) })
	return info, err
}

func avProbe(path string) (Info, error) {
	asset := avfoundation.NewURLAssetWithURLOptions(foundation.NewURLFileURLWithPath(path), nil)
	info := Info{Duration: apple.Seconds(asset.Duration())}
	var video avfoundation.AssetTrack
	for _, tr := range asset.Tracks() {
		switch tr.MediaType() {
		case avfoundation.MediaTypeVideo:
			if video.IsNil() {
				video = tr
			}
		case avfoundation.MediaTypeAudio:
			info.HasAudio = true
		}
	}
	if video.IsNil() {
		return info, ErrNoVideo
	}
	size, tf := video.NaturalSize(), video.PreferredTransform()
	info.Width, info.Height = int(math.Round(size.Width)), int(math.Round(size.Height))
	info.FPS = float64(video.NominalFrameRate())
	// The preferred transform's rotation, clockwise on screen.
	deg := int(math.Round(math.Atan2(tf.M12, tf.M11)*180/math.Pi)) + 360
	info.Rotation = (deg % 360) / 90 * 90
	if info.Rotation == 90 || info.Rotation == 270 {
		info.Width, info.Height = info.Height, info.Width
	}
	if info.FPS > 0 && info.Duration > 0 {
		info.Frames = int(math.Round(info.FPS * info.Duration))
	}
	if info.Width <= 0 || info.Height <= 0 || info.Width > 16384 || info.Height > 16384 || info.Duration > MaxDuration {
		return info, fmt.Errorf("video %dx%d, %.0f s is not supported", info.Width, info.Height, info.Duration)
	}
	return info, nil
}

func (platformSource) Frames(ctx context.Context, data []byte, times []float64, w, h int) ([]*picture.RGB, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, err
	}
	ext, ok := avExtensions[t.Format]
	if !ok {
		fb, err := fallback(t.Format)
		if err != nil {
			return nil, err
		}
		return fb.Frames(ctx, data, times, w, h)
	}
	path, cleanup, err := apple.TempFile(data, ext)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	out := make([]*picture.RGB, len(times))
	errs := make([]error, len(times))
	var wg sync.WaitGroup
	wg.Add(len(times))
	objc.WithAutoreleasePool(func() {
		asset := avfoundation.NewURLAssetWithURLOptions(foundation.NewURLFileURLWithPath(path), nil)
		gen := avfoundation.NewAssetImageGeneratorWithAsset(asset)
		gen.SetAppliesPreferredTrackTransform(true)
		gen.SetRequestedTimeToleranceBefore(apple.Time(0))
		gen.SetRequestedTimeToleranceAfter(apple.Time(0))
		gen.SetMaximumSize(coregraphics.Size{Width: float64(w), Height: float64(h)})
		index := map[int64]int{}
		vals := make([]foundation.IValue, len(times))
		for i, s := range times {
			ct := apple.Time(s)
			index[ct.Value] = i
			vals[i] = foundation.Value_ValueWithCMTime(ct)
		}
		gen.GenerateCGImagesAsynchronouslyForTimesCompletionHandler(vals, func(req coremedia.Time, img coregraphics.ImageRef, _ coremedia.Time, res avfoundation.AssetImageGeneratorResult, ferr foundation.Error) {
			defer wg.Done()
			i, ok := index[req.Value]
			if !ok || res != avfoundation.AssetImageGeneratorSucceeded || img == 0 {
				return // no frame at that time (past the end)
			}
			objc.WithAutoreleasePool(func() {
				m, err := apple.Render(coreimage.NewImageWithCGImage(img))
				if err != nil {
					errs[i] = err
					return
				}
				out[i], errs[i] = fitFrame(m, w, h)
			})
		})
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2 * time.Minute):
		return nil, errors.New("AVFoundation did not deliver the video frames in time")
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fitFrame converts a rendered frame and, if AVFoundation's size differs from
// the one asked for by rounding, resamples it to exactly w×h.
func fitFrame(m image.Image, w, h int) (*picture.RGB, error) {
	rgb := picture.FromImage(m)
	if rgb.W == w && rgb.H == h {
		return rgb, nil
	}
	pix, err := resample.BicubicRGB(rgb.Pix, rgb.W, rgb.H, w, h)
	if err != nil {
		return nil, err
	}
	return &picture.RGB{W: w, H: h, Pix: pix}, nil
}
