package chat

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"time"

	"golang.org/x/image/draw"

	"perch/media/audio"
	"perch/media/picture"
	"perch/media/resample"
	"perch/media/sniff"
	"perch/media/video"
	"perch/ui"
)

// thumbSide is the longest side of a stored thumbnail (2× the chip size).
const thumbSide = 96

// MediaProbe probes with Perch's media packages: magic-byte sniffing, image
// decoding (for size and thumbnail), audio decoding (for duration).
type MediaProbe struct {
	// Video describes a video and gives its first frame; nil shows videos
	// with an icon and no duration.
	Video func(ctx context.Context, data []byte) (VideoInfo, error)
	// Pictures decodes images; the engine shares it, so the decode made for
	// the thumbnail is the one the model's processor prepares the photo
	// from. nil decodes without a pool.
	Pictures *picture.Pool
}

// VideoInfo is what a video probe found.
type VideoInfo struct {
	Duration      time.Duration
	Width, Height int         // display size
	Frame         image.Image // the first frame, nil if none decoded
}

// Probe implements Probe.
func (p MediaProbe) Probe(ctx context.Context, data []byte, hash string) (MediaInfo, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return MediaInfo{}, fmt.Errorf("not a photo, sound or video Perch can read (%v)", err)
	}
	info := MediaInfo{MIME: t.MIME}
	switch t.Kind {
	case sniff.Image:
		info.Kind = ui.Image
		var src *picture.Source
		if p.Pictures != nil {
			src, _, err = p.Pictures.DecodeHashed(ctx, data, hash)
		} else {
			src, _, err = picture.DecodeSource(ctx, data, picture.DefaultLimits)
		}
		if err != nil {
			return MediaInfo{}, fmt.Errorf("this %s image could not be read: %v", t.Format, err)
		}
		info.Width, info.Height = src.Size() // upright, after EXIF orientation
		info.Thumb = sourceThumbnail(src)
	case sniff.Audio:
		info.Kind = ui.Audio
		a, err := audio.Decode(ctx, data, audio.Options{})
		if err != nil {
			return MediaInfo{}, fmt.Errorf("this %s audio could not be read: %v", t.Format, err)
		}
		info.Duration = seconds(a.Info.Duration)
		if info.Duration == 0 && len(a.Clips) > 0 {
			info.Duration = seconds(float64(len(a.Clips[0])) / audio.SampleRate)
		}
	case sniff.Video:
		info.Kind = ui.Video
		if p.Video != nil {
			v, err := p.Video(ctx, data)
			if err != nil {
				return MediaInfo{}, fmt.Errorf("this %s video could not be read: %v", t.Format, err)
			}
			info.Duration, info.Width, info.Height = v.Duration, v.Width, v.Height
			if v.Frame != nil {
				info.Thumb = thumbnail(v.Frame)
			}
		}
	default:
		return MediaInfo{}, fmt.Errorf("not a photo, sound or video Perch can read")
	}
	return info, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// rgbImage wraps picture.RGB as an image.Image.
func rgbImage(m *picture.RGB) image.Image {
	out := image.NewNRGBA(image.Rect(0, 0, m.W, m.H))
	for i, j := 0, 0; i < len(m.Pix); i, j = i+3, j+4 {
		out.Pix[j], out.Pix[j+1], out.Pix[j+2], out.Pix[j+3] = m.Pix[i], m.Pix[i+1], m.Pix[i+2], 0xff
	}
	return out
}

// thumbSize scales w×h so its longest side is at most thumbSide.
func thumbSize(w, h int) (int, int) {
	scale := min(1, float64(thumbSide)/float64(max(w, h)))
	return max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
}

// sourceThumbnail resamples a decoded picture straight from its rows (no
// full-size RGB copy) and encodes PNG.
func sourceThumbnail(src *picture.Source) []byte {
	w, h := src.Size()
	tw, th := thumbSize(w, h)
	pix, err := resample.Bicubic(src, tw, th)
	if err != nil {
		return nil
	}
	return encodePNG(rgbImage(&picture.RGB{W: tw, H: th, Pix: pix}))
}

// thumbnail scales img so its longest side is thumbSide and encodes PNG.
func thumbnail(img image.Image) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil
	}
	tw, th := thumbSize(w, h)
	dst := image.NewNRGBA(image.Rect(0, 0, tw, th))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return encodePNG(dst)
}

func encodePNG(dst image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, dst); err != nil {
		return nil
	}
	return buf.Bytes()
}

// VideoFrame reads a video's duration and first frame with media/video
// (AVFoundation on macOS, ffprobe/ffmpeg elsewhere), for the chip.
func VideoFrame(ctx context.Context, data []byte) (VideoInfo, error) {
	info, err := video.Probe(ctx, data)
	if err != nil {
		return VideoInfo{}, err
	}
	v := VideoInfo{Duration: seconds(info.Duration), Width: info.Width, Height: info.Height}
	w, h := video.FrameSize(info.Width, info.Height, 2*thumbSide)
	frames, err := video.Platform.Frames(ctx, data, []float64{0}, w, h)
	if err == nil && len(frames) > 0 && frames[0] != nil {
		v.Frame = rgbImage(frames[0]) // without it the chip shows an icon
	}
	return v, nil
}
