package engine

import (
	"context"
	"errors"
)

// prepareVideo samples frames (and the audio track) of a video.
func (e *Engine) prepareVideo(ctx context.Context, data []byte, req *Request) (*mediaItem, error) {
	if e.visionCfg == nil {
		return nil, errors.New("this model cannot see video (no vision tower); choose a model with vision")
	}
	return nil, errors.New("video input is not available in this build")
}
