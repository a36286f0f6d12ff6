package gemma4

import (
	"fmt"

	"perch/engine/prompt"
	"perch/engine/tensor"
	"perch/media/logmel"
)

// EncodeMedia runs one prepared attachment through its tower: the rows
// that replace its placeholders, [rows, H]. A video's frames are encoded one
// by one and stacked (its sound track is an attachment of its own); audio
// rows are picked to match the placeholder count as mlx-vlm does.
func (m *Model) EncodeMedia(b tensor.Backend, it *Media) (tensor.Tensor, error) {
	switch it.Kind {
	case prompt.Image, prompt.Video:
		if m.Vision == nil {
			return nil, fmt.Errorf("this model has no vision tower")
		}
		parts := make([]tensor.Tensor, 0, len(it.Frames))
		for k, f := range it.Frames {
			t, err := m.Vision.Encode(f)
			if err != nil {
				return nil, err
			}
			if n := t.Shape()[0]; n != it.Tokens[k] {
				return nil, fmt.Errorf("the vision tower gave %d rows for %d placeholders", n, it.Tokens[k])
			}
			parts = append(parts, t)
		}
		if len(parts) == 1 {
			return parts[0], nil
		}
		return b.Concat(0, parts...), nil
	case prompt.Audio:
		return m.encodeAudio(b, it)
	}
	return nil, fmt.Errorf("cannot encode %q media", it.Kind)
}

// encodeAudio runs a clip through the audio path: [AudioTokens, H].
func (m *Model) encodeAudio(b tensor.Backend, it *Media) (tensor.Tensor, error) {
	a := m.Audio
	if a == nil {
		return nil, fmt.Errorf("this model has no audio tower")
	}
	var feats tensor.Tensor
	var err error
	if it.Wave != nil {
		feats, err = a.EncodeWaveform(it.Wave)
	} else {
		mel := b.FromFloat32(it.Mel.Data, []int{1, it.Mel.Frames, it.Mel.Bins}, tensor.Float32)
		feats, _, err = a.Encode(mel, it.Mel.Mask)
	}
	if err != nil {
		return nil, err
	}
	s := feats.Shape()
	feats = b.Reshape(feats, s[len(s)-2], s[len(s)-1])
	return audioRows(b, feats, it.AudioTokens), nil
}

// audioRows picks the encoder row for each audio placeholder as mlx-vlm's
// masked_scatter does: all rows in order, wrapping when there are more
// placeholders than rows (the golden fixtures follow mlx-vlm; HF would
// drop invalid rows and reject a count mismatch).
func audioRows(b tensor.Backend, feats tensor.Tensor, tokens int) tensor.Tensor {
	rows := feats.Shape()[0]
	if rows == tokens {
		return feats
	}
	pick := logmel.PlaceholderRows(tokens, rows)
	idx := make([]int32, tokens)
	for i, r := range pick {
		idx[i] = int32(r)
	}
	return b.Take(feats, b.FromInt32(idx, []int{tokens}), 0)
}
