package engine

import (
	"context"
	"errors"
	"fmt"

	"perch/media/video"
)

// prepareVideo samples frames at the request's rate (default 2 fps, at most
// 32 frames), each at the per-frame budget of 70 soft tokens, with their
// mm:ss stamps; and the audio track when the model can hear and the
// request does not opt out.
func (e *Engine) prepareVideo(ctx context.Context, data []byte, req *Request) (*mediaItem, error) {
	if e.visionCfg == nil {
		return nil, errors.New("this model cannot see video (no vision tower); choose a model with vision")
	}
	if req.VideoFPS < 0 || req.MaxFrames < 0 {
		return nil, fmt.Errorf("video fps and max frames must not be negative")
	}
	wantAudio := e.info.Audio && !req.NoVideoAudio
	v, err := video.Decode(ctx, data, video.Options{FPS: req.VideoFPS, MaxFrames: req.MaxFrames, Audio: wantAudio})
	if err != nil {
		return nil, err
	}
	if len(v.Frames) == 0 {
		return nil, errors.New("the video has no frames to show the model")
	}
	it := &mediaItem{kind: PartVideo, key: contentKey(PartVideo, data, fmt.Sprintf("%g/%d/%v", req.VideoFPS, req.MaxFrames, wantAudio))}
	for _, f := range v.Frames {
		p, err := e.framePatches(f.Image, videoFrameTokens)
		if err != nil {
			return nil, fmt.Errorf("frame at %s: %w", f.Stamp, err)
		}
		it.frames = append(it.frames, p.patches)
		it.tokens = append(it.tokens, p.tokens)
		it.stamps = append(it.stamps, f.Stamp)
	}
	if v.Audio != nil && len(v.Audio.Clips) > 0 && len(v.Audio.Clips[0]) > 0 {
		track, err := e.audioItem(v.Audio.Clips[0], it.key+":audio")
		if err != nil {
			return nil, fmt.Errorf("audio track: %w", err)
		}
		track.name = "audio track"
		it.track = track
	}
	return it, nil
}
