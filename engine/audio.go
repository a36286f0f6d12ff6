package engine

import (
	"fmt"

	"perch/engine/tensor"
)

// encodeAudio runs an audio clip through the model's audio path: [rows, H].
func (e *Engine) encodeAudio(it *mediaItem) (tensor.Tensor, error) {
	b, a := e.b, e.model.Audio
	if a == nil {
		return nil, fmt.Errorf("this model has no audio tower")
	}
	var feats tensor.Tensor
	var err error
	if it.wave != nil {
		feats, err = a.EncodeWaveform(it.wave)
	} else {
		mel := b.FromFloat32(it.mel.Data, []int{1, it.mel.Frames, it.mel.Bins}, tensor.Float32)
		feats, _, err = a.Encode(mel, it.mel.Mask)
	}
	if err != nil {
		return nil, err
	}
	s := feats.Shape()
	return b.Reshape(feats, s[len(s)-2], s[len(s)-1]), nil
}
