package processor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"perch/engine/gemma4"
	"perch/engine/prompt"
	"perch/internal/contenthash"
	"perch/media/audio"
	"perch/media/logmel"
	"perch/media/picture"
	"perch/media/video"
	"perch/media/vision"
)

// mediaSize is the memory a prepared attachment holds, for the cache's bound.
func mediaSize(m *gemma4.Media) int64 {
	var n int64
	for _, f := range m.Frames {
		n += 4*int64(len(f.Data)) + 8*int64(len(f.Positions))
	}
	if m.Mel != nil {
		n += 4*int64(len(m.Mel.Data)) + int64(len(m.Mel.Mask))
	}
	n += 4 * int64(len(m.Wave))
	if m.Track != nil {
		n += mediaSize(m.Track)
	}
	return n + 256
}

// videoFrameTokens is the soft-token budget of each video frame.
const videoFrameTokens = 70

// imageBudgets are the soft-token budgets Hugging Face accepts.
var imageBudgets = []int{70, 140, 280, 560, 1120}

// item is one media part of a request on its way through Prepare.
type item struct {
	*gemma4.Media
	name string
}

// prepareMedia prepares every media part, in document order: from the
// cache where the same content was asked for before, else decoded, once
// the whole request is known to be within the limits (the images' pixels;
// with o.Context, the text's least tokens plus every part's, measured
// from headers and probes).
func (p *Processor) prepareMedia(ctx context.Context, msgs []prompt.Message, o PrepareOptions, least int) ([]item, error) {
	type want struct {
		part prompt.Part
		key  string
		at   int
		same int // -1, or the earlier item with the same key
	}
	var items []item
	var todo []want
	seen := map[string]int{}
	var pixels int64
	for _, msg := range msgs {
		for _, part := range msg.Content {
			if part.Type == prompt.Text {
				continue
			}
			name := part.Name
			if name == "" {
				name = fmt.Sprintf("%s %d", part.Type, len(items)+1)
			}
			key, err := p.mediaKey(part, o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			items = append(items, item{name: name})
			if m, ok := p.media.Get(key); ok {
				items[len(items)-1].Media = m
				least += mediaTokens(m)
				continue
			}
			if o.Context > 0 {
				n, err := p.leastTokens(ctx, part, o)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				if least += n; least >= o.Context {
					return nil, &ContextError{Prompt: least, Context: o.Context, AtLeast: true}
				}
			}
			if first, ok := seen[key]; ok { // the same file twice in one request
				todo = append(todo, want{key: key, at: len(items) - 1, same: first})
				continue
			}
			seen[key] = len(items) - 1
			if part.Type == prompt.Image {
				info, err := picture.Config(part.Data)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				pixels += int64(info.Width) * int64(info.Height)
				if pixels > p.maxPix {
					return nil, fmt.Errorf("%s: the request's images add up to more than %.0f megapixels; send fewer or smaller images",
						name, float64(p.maxPix)/1e6)
				}
			}
			todo = append(todo, want{part: part, key: key, at: len(items) - 1, same: -1})
		}
	}
	for _, w := range todo {
		if w.same >= 0 {
			items[w.at].Media = items[w.same].Media
			continue
		}
		m, err := p.prepareOne(ctx, w.part, w.key, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", items[w.at].name, err)
		}
		p.media.Put(w.key, m, mediaSize(m))
		items[w.at].Media = m
	}
	return items, nil
}

// mediaKey names a part's prepared form: its kind, content hash and the
// settings that shape it. It also refuses media the model cannot take.
func (p *Processor) mediaKey(part prompt.Part, o PrepareOptions) (string, error) {
	sum := part.Hash
	if sum == "" {
		sum = contenthash.Of(part.Data)
	}
	key := string(part.Type) + ":" + sum + ":"
	switch part.Type {
	case prompt.Image:
		budget, err := p.imageBudget(o.ImageTokens)
		if err != nil {
			return "", err
		}
		return key + fmt.Sprint(budget), nil
	case prompt.Audio:
		if !p.audio {
			return "", errors.New("this model cannot hear audio (no audio tower); choose Gemma-4 E2B, E4B or 12B")
		}
		return key, nil
	case prompt.Video:
		if p.vision == nil {
			return "", errors.New("this model cannot see video (no vision tower); choose a model with vision")
		}
		if o.VideoFPS < 0 || o.MaxFrames < 0 {
			return "", errors.New("video fps and max frames must not be negative")
		}
		return key + fmt.Sprintf("%g/%d/%v", o.VideoFPS, o.MaxFrames, p.audio && !o.NoVideoAudio), nil
	}
	return "", fmt.Errorf("unknown content type %q", part.Type)
}

func (p *Processor) imageBudget(requested int) (int, error) {
	if p.vision == nil {
		return 0, errors.New("this model cannot see images (no vision tower); choose a model with vision")
	}
	if requested == 0 {
		if p.pc.ImageProcessor.MaxSoftTokens > 0 {
			return p.pc.ImageProcessor.MaxSoftTokens, nil
		}
		return p.vision.DefaultSoftTokens(), nil
	}
	for _, b := range imageBudgets {
		if requested == b {
			return b, nil
		}
	}
	return 0, fmt.Errorf("image budget %d is not one of 70, 140, 280, 560, 1120 soft tokens", requested)
}

func (p *Processor) prepareOne(ctx context.Context, part prompt.Part, key string, o PrepareOptions) (*gemma4.Media, error) {
	switch part.Type {
	case prompt.Image:
		budget, _ := p.imageBudget(o.ImageTokens)
		src, _, err := p.pictures.DecodeHashed(ctx, part.Data, hashOf(key))
		if err != nil {
			return nil, err
		}
		f, n, err := p.patches(src, budget)
		if err != nil {
			return nil, err
		}
		return &gemma4.Media{Kind: prompt.Image, Key: key, Frames: []*gemma4.Patches{f}, Tokens: []int{n}}, nil
	case prompt.Audio:
		a, err := audio.Decode(ctx, part.Data, audio.Options{})
		if err != nil {
			return nil, err
		}
		return p.audioMedia(a.Clips[0], key)
	}
	return p.prepareVideo(ctx, part.Data, key, o)
}

// patches resizes a picture to the budget and cuts the tower's patches
// (only the real ones: each image runs through the tower on its own).
func (p *Processor) patches(src *picture.Source, budget int) (*gemma4.Patches, int, error) {
	vc := p.vision
	params := vision.Params{MaxSoftTokens: budget, PatchSize: vc.PatchSize, PoolingKernel: vc.PoolingKernelSize,
		Tower: vision.SigLIP, Unpadded: true}
	if vc.Unified() {
		params.Tower = vision.Unified
		if vc.PatchSize*vc.PoolingKernelSize != vc.ModelPatchSize {
			return nil, 0, fmt.Errorf("vision_config: model_patch_size %d is not patch_size x pooling_kernel_size", vc.ModelPatchSize)
		}
	}
	in, err := vision.PrepareSource(src, params)
	if err != nil {
		return nil, 0, err
	}
	pt := in.Patches
	out := &gemma4.Patches{N: pt.Real, Data: pt.Data, Positions: make([][2]int32, pt.Real)}
	for i := range out.Positions {
		out.Positions[i] = [2]int32{pt.Pos[2*i], pt.Pos[2*i+1]}
	}
	return out, in.Target.SoftTokens, nil
}

// audioMedia prepares 16 kHz samples for the model's audio path.
func (p *Processor) audioMedia(clip []float32, key string) (*gemma4.Media, error) {
	if len(clip) == 0 {
		return nil, errors.New("the audio clip is empty (zero samples)")
	}
	m := &gemma4.Media{Kind: prompt.Audio, Key: key,
		AudioTokens: logmel.SoftTokens(len(clip), 16000, p.pc.AudioMsPerToken, p.pc.AudioSeqLength)}
	if p.unifiedAudio {
		m.Wave = clip
		return m, nil
	}
	f, err := p.mel.Compute(clip)
	if err != nil {
		return nil, err
	}
	m.Mel = f
	return m, nil
}

// prepareVideo samples frames at the request's rate (default 2 fps, at most
// 32 frames), each at the per-frame budget of 70 soft tokens, with their
// mm:ss stamps; and the sound track when the model can hear and the
// request does not opt out.
func (p *Processor) prepareVideo(ctx context.Context, data []byte, key string, o PrepareOptions) (*gemma4.Media, error) {
	wantAudio := p.audio && !o.NoVideoAudio
	v, err := video.Decode(ctx, data, video.Options{FPS: o.VideoFPS, MaxFrames: o.MaxFrames, Audio: wantAudio})
	if err != nil {
		return nil, err
	}
	if len(v.Frames) == 0 {
		return nil, errors.New("the video has no frames to show the model")
	}
	m := &gemma4.Media{Kind: prompt.Video, Key: key}
	for _, f := range v.Frames {
		pt, n, err := p.patches(picture.FromRGB(f.Image), videoFrameTokens)
		if err != nil {
			return nil, fmt.Errorf("frame at %s: %w", f.Stamp, err)
		}
		m.Frames = append(m.Frames, pt)
		m.Tokens = append(m.Tokens, n)
		m.Stamps = append(m.Stamps, f.Stamp)
	}
	if v.Audio != nil && len(v.Audio.Clips) > 0 && len(v.Audio.Clips[0]) > 0 {
		track, err := p.audioMedia(v.Audio.Clips[0], key+":audio")
		if err != nil {
			return nil, fmt.Errorf("audio track: %w", err)
		}
		m.Track = track
	}
	return m, nil
}

// hashOf is the content hash inside a media key (kind:hash:settings).
func hashOf(key string) string {
	_, rest, _ := strings.Cut(key, ":")
	h, _, _ := strings.Cut(rest, ":")
	return h
}
