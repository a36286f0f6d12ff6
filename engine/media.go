package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"perch/engine/gemma4"
	"perch/media/audio"
	"perch/media/logmel"
	"perch/media/picture"
	"perch/media/vision"
)

// Supported image budgets (soft tokens per image), as Hugging Face accepts them.
var imageBudgets = []int{70, 140, 280, 560, 1120}

// videoFrameTokens is the soft-token budget of each video frame.
const videoFrameTokens = 70

// mediaItem is one attachment, preprocessed on the caller's goroutine into
// exactly what its tower takes.
type mediaItem struct {
	kind   PartType
	name   string
	key    string            // encoder-cache key: content hash + what was asked of it
	frames []*gemma4.Patches // image: one; video: one per sampled frame
	tokens []int             // soft tokens per frame
	stamps []string          // video: "mm:ss" per frame
	mel    *logmel.Features  // audio on the conformer tower
	wave   []float32         // audio on the unified embedder (16 kHz)
	// audioTokens is the placeholder count of an audio clip (mlx-vlm's rule).
	audioTokens int
	// track is a video's audio, spliced after its frames.
	track *mediaItem
}

func contentKey(kind PartType, data []byte, params string) string {
	h := sha256.Sum256(data)
	return string(kind) + ":" + hex.EncodeToString(h[:]) + ":" + params
}

// prepareMedia turns every media part of the request into a mediaItem, in
// document order.
func (e *Engine) prepareMedia(ctx context.Context, req *Request) ([]*mediaItem, error) {
	var items []*mediaItem
	for _, msg := range req.Messages {
		for _, p := range msg.Content {
			if p.Type == PartText {
				continue
			}
			name := p.Name
			if name == "" {
				name = fmt.Sprintf("%s %d", p.Type, len(items)+1)
			}
			var it *mediaItem
			var err error
			switch p.Type {
			case PartImage:
				it, err = e.prepareImage(ctx, p.Data, req.MaxSoftTokens)
			case PartAudio:
				it, err = e.prepareAudio(ctx, p.Data)
			case PartVideo:
				it, err = e.prepareVideo(ctx, p.Data, req)
			default:
				err = fmt.Errorf("unknown content type %q", p.Type)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			it.name = name
			items = append(items, it)
		}
	}
	return items, nil
}

// imageParams are the vision preprocessing numbers for a budget.
func (e *Engine) imageParams(budget int) (vision.Params, error) {
	vc := e.visionCfg
	if vc == nil {
		return vision.Params{}, fmt.Errorf("this model cannot see images (no vision tower); choose a model with vision")
	}
	p := vision.Params{MaxSoftTokens: budget, PatchSize: vc.PatchSize, PoolingKernel: vc.PoolingKernelSize, Tower: vision.SigLIP}
	if vc.Unified() {
		p.Tower = vision.Unified
		if vc.PatchSize*vc.PoolingKernelSize != vc.ModelPatchSize {
			return p, fmt.Errorf("vision_config: model_patch_size %d is not patch_size x pooling_kernel_size", vc.ModelPatchSize)
		}
	}
	return p, nil
}

func (e *Engine) imageBudget(requested int) (int, error) {
	if requested == 0 {
		if e.proc.ImageProcessor.MaxSoftTokens > 0 {
			return e.proc.ImageProcessor.MaxSoftTokens, nil
		}
		return e.visionCfg.DefaultSoftTokens(), nil
	}
	for _, b := range imageBudgets {
		if requested == b {
			return b, nil
		}
	}
	return 0, fmt.Errorf("image budget %d is not one of 70, 140, 280, 560, 1120 soft tokens", requested)
}

func (e *Engine) prepareImage(ctx context.Context, data []byte, requested int) (*mediaItem, error) {
	if e.visionCfg == nil {
		return nil, fmt.Errorf("this model cannot see images (no vision tower); choose a model with vision")
	}
	budget, err := e.imageBudget(requested)
	if err != nil {
		return nil, err
	}
	params, err := e.imageParams(budget)
	if err != nil {
		return nil, err
	}
	in, _, err := vision.PrepareBytes(ctx, data, picture.DefaultLimits, params)
	if err != nil {
		return nil, err
	}
	p := towerInput(in)
	return &mediaItem{kind: PartImage, key: contentKey(PartImage, data, fmt.Sprint(budget)),
		frames: []*gemma4.Patches{p.patches}, tokens: []int{p.tokens}}, nil
}

type framePrep struct {
	patches *gemma4.Patches
	tokens  int
}

// framePatches resizes and patchifies one picture for the tower (unpadded:
// each image runs through the tower on its own).
func (e *Engine) framePatches(img *picture.RGB, budget int) (framePrep, error) {
	params, err := e.imageParams(budget)
	if err != nil {
		return framePrep{}, err
	}
	in, err := vision.Prepare(img, params)
	if err != nil {
		return framePrep{}, err
	}
	return towerInput(in), nil
}

// towerInput keeps the real patches (towers run one image at a time, so
// the padding rows would only cost work).
func towerInput(in *vision.Input) framePrep {
	pt := in.Patches
	gp := &gemma4.Patches{N: pt.Real, Data: pt.Data[:pt.Real*pt.Dim], Positions: make([][2]int32, pt.Real)}
	for i := range gp.Positions {
		gp.Positions[i] = [2]int32{pt.Pos[2*i], pt.Pos[2*i+1]}
	}
	return framePrep{gp, in.Target.SoftTokens}
}

func (e *Engine) prepareAudio(ctx context.Context, data []byte) (*mediaItem, error) {
	if !e.info.Audio {
		return nil, fmt.Errorf("this model cannot hear audio (no audio tower); choose Gemma-4 E2B, E4B or 12B")
	}
	a, err := audio.Decode(ctx, data, audio.Options{})
	if err != nil {
		return nil, err
	}
	return e.audioItem(a.Clips[0], contentKey(PartAudio, data, ""))
}

// audioItem prepares 16 kHz samples for the model's audio path.
func (e *Engine) audioItem(clip []float32, key string) (*mediaItem, error) {
	if len(clip) == 0 {
		return nil, fmt.Errorf("the audio clip is empty (zero samples)")
	}
	it := &mediaItem{kind: PartAudio, key: key,
		audioTokens: logmel.SoftTokens(len(clip), 16000, e.proc.AudioMsPerToken, e.proc.AudioSeqLength)}
	if e.unifiedAudio() {
		it.wave = clip
		return it, nil
	}
	f, err := e.mel.Compute(clip)
	if err != nil {
		return nil, err
	}
	it.mel = f
	return it, nil
}

// placeholder strings of the model's tokenizer, from config ids.
type placeholders struct {
	image, audio, video, boi, eoi, boa, eoa string
}

func (e *Engine) placeholderText() placeholders {
	c := e.cfg
	tok := func(id int32) string {
		if id == 0 {
			return ""
		}
		return e.tok.IDToken(id)
	}
	return placeholders{image: tok(c.ImageTokenID), audio: tok(c.AudioTokenID), video: tok(e.videoTokenID()),
		boi: tok(c.BOITokenID), eoi: tok(c.EOITokenID), boa: tok(c.BOATokenID), eoa: tok(c.EOATokenID)}
}

// expansion is the text that replaces an item's placeholder: image ->
// boi + image*n + eoi; audio -> boa + audio*n + eoa; video -> per frame
// "mm:ss " + boi + video*n + eoi, joined by spaces (then its audio track).
func (ph placeholders) expansion(it *mediaItem) string {
	var sb strings.Builder
	switch it.kind {
	case PartImage:
		sb.WriteString(ph.boi + strings.Repeat(ph.image, it.tokens[0]) + ph.eoi)
	case PartAudio:
		sb.WriteString(ph.boa + strings.Repeat(ph.audio, it.audioTokens) + ph.eoa)
	case PartVideo:
		for i, n := range it.tokens {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(it.stamps[i] + " " + ph.boi + strings.Repeat(ph.video, n) + ph.eoi)
		}
		if it.track != nil {
			sb.WriteString(ph.expansion(it.track))
		}
	}
	return sb.String()
}

// marker is the placeholder the chat template writes for an item.
func (ph placeholders) marker(kind PartType) string {
	switch kind {
	case PartImage:
		return ph.image
	case PartAudio:
		return ph.audio
	}
	return ph.video
}

// expandText replaces each item's marker, in document order, by its
// expansion; markers and attachments must agree in number and kind.
func (ph placeholders) expandText(rendered string, items []*mediaItem) (string, error) {
	var sb strings.Builder
	rest := rendered
	for i := 0; ; i++ {
		j, kind := ph.nextMarker(rest)
		if j < 0 {
			if i < len(items) {
				return "", fmt.Errorf("%d attachments but the prompt has only %d media placeholders", len(items), i)
			}
			break
		}
		if i >= len(items) {
			return "", fmt.Errorf("the prompt has more media placeholders than the %d attachments", len(items))
		}
		if kind != items[i].kind {
			return "", fmt.Errorf("placeholder %d is for %s but attachment %d (%s) is %s", i+1, kind, i+1, items[i].name, items[i].kind)
		}
		sb.WriteString(rest[:j])
		sb.WriteString(ph.expansion(items[i]))
		rest = rest[j+len(ph.marker(kind)):]
	}
	sb.WriteString(rest)
	return sb.String(), nil
}

// nextMarker finds the first media marker in s.
func (ph placeholders) nextMarker(s string) (int, PartType) {
	best, kind := -1, PartType("")
	for _, k := range []PartType{PartImage, PartAudio, PartVideo} {
		m := ph.marker(k)
		if m == "" {
			continue
		}
		if j := strings.Index(s, m); j >= 0 && (best < 0 || j < best) {
			best, kind = j, k
		}
	}
	return best, kind
}
