package video

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"perch/media/internal/ffmpeg"
	"perch/media/picture"
)

// FFmpeg reads video through ffprobe and ffmpeg (Linux; also macOS's
// fallback for containers AVFoundation cannot open, such as WebM).
type FFmpeg struct{}

// Probe runs ffprobe.
func (FFmpeg) Probe(ctx context.Context, data []byte) (Info, error) {
	in, err := ffmpeg.NewInput(data)
	if err != nil {
		return Info{}, err
	}
	defer in.Close()
	p, err := ffmpeg.ProbeInput(ctx, in)
	if err != nil {
		return Info{}, fmt.Errorf("reading %s: %w", in.Format, err)
	}
	return infoFromProbe(p)
}

// infoFromProbe turns ffprobe's description into Info, refusing nonsense.
func infoFromProbe(p *ffmpeg.Probe) (Info, error) {
	st := p.FirstStream("video")
	if st == nil {
		return Info{}, ErrNoVideo
	}
	info := Info{Width: st.Width, Height: st.Height, FPS: ffmpeg.Rate(st.AvgFrameRate), HasAudio: p.FirstStream("audio") != nil}
	if info.FPS == 0 {
		info.FPS = ffmpeg.Rate(st.RFrameRate)
	}
	info.Duration = ffmpeg.Seconds(st.Duration)
	if info.Duration == 0 {
		info.Duration = ffmpeg.Seconds(p.Format.Duration)
	}
	if n, err := strconv.Atoi(st.NbFrames); err == nil && n > 0 {
		info.Frames = n
	}
	// Rotation: the display matrix's angle is counter-clockwise; older files carry a "rotate" tag.
	rot := 0
	for _, sd := range st.SideData {
		if sd.Type == "Display Matrix" {
			rot = -int(sd.Rotation)
		}
	}
	if r, err := strconv.Atoi(st.Tags.Rotate); err == nil && rot == 0 {
		rot = r
	}
	info.Rotation = ((rot % 360) + 360) % 360 / 90 * 90
	if info.Rotation == 90 || info.Rotation == 270 {
		info.Width, info.Height = info.Height, info.Width
	}
	if info.Width <= 0 || info.Height <= 0 || info.Width > 16384 || info.Height > 16384 {
		return info, fmt.Errorf("video frame size %dx%d is not supported", info.Width, info.Height)
	}
	if info.Duration > MaxDuration {
		return info, fmt.Errorf("video duration %.0f s is not supported", info.Duration)
	}
	return info, nil
}

// Frames seeks to each time with its own ffmpeg run (cost independent of the
// video's length), two at a time; ffmpeg applies the rotation (autorotate).
func (FFmpeg) Frames(ctx context.Context, data []byte, times []float64, w, h int) ([]*picture.RGB, error) {
	in, err := ffmpeg.NewInput(data)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out := make([]*picture.RGB, len(times))
	errs := make([]error, len(times))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, t := range times {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = frameAt(ctx, in, t, w, h)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, errNoFrame) {
			return nil, err
		}
	}
	return out, nil
}

var errNoFrame = errors.New("no frame at that time")

func frameAt(ctx context.Context, in *ffmpeg.Input, t float64, w, h int) (*picture.RGB, error) {
	args := []string{"-nostdin", "-v", "error", "-ss", strconv.FormatFloat(t, 'f', 3, 64)}
	args = append(args, in.Args()...)
	args = append(args, "-map", "0:v:0", "-an", "-sn", "-dn", "-frames:v", "1",
		"-vf", fmt.Sprintf("scale=%d:%d:flags=bicubic+accurate_rnd+full_chroma_int", w, h),
		"-pix_fmt", "rgb24", "-f", "rawvideo", "-")
	size := int64(w * h * 3)
	b, err := ffmpeg.Run(ctx, "ffmpeg", args, size)
	if err != nil {
		return nil, fmt.Errorf("video frame at %.2f s: %w", t, err)
	}
	if int64(len(b)) != size {
		return nil, errNoFrame
	}
	return &picture.RGB{W: w, H: h, Pix: b}, nil
}
