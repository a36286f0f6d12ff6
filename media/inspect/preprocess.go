package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"perch/media/audio"
	"perch/media/logmel"
	"perch/media/npy"
	"perch/media/picture"
	"perch/media/video"
	"perch/media/vision"
)

// Preprocess writes the model inputs for data into dir and returns the list
// of files written (report.json first):
//   - image: resized.png, siglip_patches.npy [N,768] f32, siglip_positions.npy [N,2] i32,
//     unified_patches.npy [M,6912] f32, unified_positions.npy [M,2] i32;
//   - audio: clipK_samples.npy [n] f32 (16 kHz), clipK_logmel.npy [T,128] f32, clipK_mask.npy [T] bool;
//   - video: frame_NN.png (resized), video_patches.npy [F,N,768], video_positions.npy [F,N,2],
//     video_stamps.json, and audio_clipK_* for the audio track.
func Preprocess(ctx context.Context, data []byte, dir string, o Options) ([]string, error) {
	o = o.Defaults()
	rep, err := Inspect(ctx, data, o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &writer{dir: dir}
	w.json("report.json", rep)
	switch {
	case rep.Image != nil:
		src, _, err := picture.DecodeSource(ctx, data, picture.DefaultLimits)
		if err != nil {
			return nil, err
		}
		sig, err := vision.PrepareSource(src, o.vision(o.MaxSoftTokens, vision.SigLIP))
		if err != nil {
			return nil, err
		}
		uni, err := vision.Prepare(sig.Resized, o.vision(o.MaxSoftTokens, vision.Unified))
		if err != nil {
			return nil, err
		}
		w.png("resized.png", sig.Resized)
		w.patches("siglip", sig.Patches)
		w.patches("unified", uni.Patches)
	case rep.Audio != nil:
		a, err := audio.Decode(ctx, data, o.Audio)
		if err != nil {
			return nil, err
		}
		w.clips("", a)
	case rep.Video != nil:
		v, err := video.Decode(ctx, data, withAudio(o.Video))
		if err != nil {
			return nil, err
		}
		var all [][]float32
		var pos [][]int32
		var n, stamps = 0, []SampledTime{}
		for i, f := range v.Frames {
			in, err := vision.Prepare(f.Image, o.vision(o.FrameSoftTokens, vision.SigLIP))
			if err != nil {
				return nil, err
			}
			w.png(fmt.Sprintf("frame_%02d.png", i), in.Resized)
			all, pos, n = append(all, in.Patches.Data), append(pos, in.Patches.Pos), in.Patches.N
			stamps = append(stamps, SampledTime{f.Time, f.Stamp})
		}
		w.npy("video_patches.npy", &npy.Array{Shape: []int{len(all), n, 3 * o.PatchSize * o.PatchSize}, F32: concat(all)})
		w.npy("video_positions.npy", &npy.Array{Shape: []int{len(pos), n, 2}, I32: concat(pos)})
		w.json("video_stamps.json", stamps)
		if v.Audio != nil {
			w.clips("audio_", v.Audio)
		}
	}
	return w.files, w.err
}

func withAudio(o video.Options) video.Options {
	o.Audio = true
	return o
}

func concat[T any](parts [][]T) []T {
	var out []T
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// writer records files and keeps the first error.
type writer struct {
	dir   string
	files []string
	err   error
}

func (w *writer) path(name string) string {
	w.files = append(w.files, name)
	return filepath.Join(w.dir, name)
}

func (w *writer) keep(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

func (w *writer) json(name string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	w.keep(err)
	w.keep(os.WriteFile(w.path(name), append(b, '\n'), 0o644))
}

func (w *writer) npy(name string, a *npy.Array) { w.keep(npy.WriteFile(w.path(name), a)) }

func (w *writer) png(name string, m *picture.RGB) {
	img := image.NewNRGBA(image.Rect(0, 0, m.W, m.H))
	for i := 0; i < m.W*m.H; i++ {
		copy(img.Pix[4*i:4*i+3], m.Pix[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	f, err := os.Create(w.path(name))
	if err != nil {
		w.keep(err)
		return
	}
	w.keep(png.Encode(f, img))
	w.keep(f.Close())
}

func (w *writer) patches(prefix string, p *vision.Patches) {
	w.npy(prefix+"_patches.npy", &npy.Array{Shape: []int{p.N, p.Dim}, F32: p.Data})
	w.npy(prefix+"_positions.npy", &npy.Array{Shape: []int{p.N, 2}, I32: p.Pos})
}

func (w *writer) clips(prefix string, a *audio.Audio) {
	e, err := logmel.New(logmel.Gemma4)
	if err != nil {
		w.keep(err)
		return
	}
	for k, clip := range a.Clips {
		f, err := e.Compute(clip)
		if err != nil {
			w.keep(err)
			return
		}
		base := fmt.Sprintf("%sclip%d_", prefix, k)
		w.npy(base+"samples.npy", &npy.Array{Shape: []int{len(clip)}, F32: clip})
		w.npy(base+"logmel.npy", &npy.Array{Shape: []int{f.Frames, f.Bins}, F32: f.Data})
		w.npy(base+"mask.npy", &npy.Array{Shape: []int{f.Frames}, Bool: f.Mask})
	}
}
