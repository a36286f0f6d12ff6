// Package media turns the photos, sounds and videos a user drops into Perch
// into exactly what Gemma-4's towers take. It is CPU-only and knows nothing of
// MLX, the engine or Fyne; model numbers (patch size, pooling kernel, soft-token
// budgets, mel parameters) arrive as parameters. research/gemma4.md §4–6.
//
// Packages, one concern each:
//
//	sniff     Detect(b) (Type, error): kind and format from magic bytes, never names
//	picture   Decode(ctx, data, lim) (*RGB, Info, error): PNG/JPEG/GIF/WebP/BMP/TIFF in Go,
//	          HEIC/AVIF via the platform; EXIF orientation; Pillow's convert("RGB");
//	          DecodeSource for a JPEG converted row by row inside the resize
//	resample  BicubicRGB / Bicubic: Pillow's antialiased bicubic resize, bit-exact
//	vision    TargetSize, Rescale, Patchify, Prepare / PrepareBytes / PrepareSource
//	audio     Decode(ctx, data, Options) (*Audio, error): any container to 16 kHz mono
//	          clips of ≤ 30 s; Resample; FromPCM; EncodeWAV
//	logmel    New(Gemma4).Compute(samples) (*Features, error); SoftTokens;
//	          EncoderFrames; PlaceholderRows; UnifiedRows
//	video     Decode(ctx, data, Options) (*Video, error); Probe; SampleTimes; Stamp
//	mic       Start(Options) (*Recorder, error); Levels; Full; Stop() (*Clip, error)
//	fetch     New(Options).Fetch(ctx, url, kind) ([]byte, error): data: and guarded http(s)
//	inspect   Inspect / Preprocess behind `perch media inspect|preprocess`
//	npy       .npy files for comparisons with the Python reference
//
// What the engine calls:
//
// Image → vision.PrepareBytes(ctx, data, picture.DefaultLimits, vision.Params{
// MaxSoftTokens: 280, PatchSize: 16, PoolingKernel: 3, Tower: vision.SigLIP or
// vision.Unified}) returns *vision.Input: Resized (*picture.RGB, the Pillow-exact
// resize), Target.SoftTokens, and Patches: Data []float32 laid out [N][Dim]
// (Dim 768 for 16-px SigLIP patches padded to MaxSoftTokens·9 rows, 6912 for
// 48-px unified patches padded to MaxSoftTokens rows; values uint8·float32(1/255);
// each row [dy][dx][c]) and Pos []int32 [N][2] (x, y), (-1, -1) on padding rows;
// Real says how many rows are real.
//
// Audio → audio.Decode(ctx, data, audio.Options{}) gives Clips [][]float32
// (16 kHz mono, ≤ 30 s each; Notice says when audio was cut). For each clip,
// logmel.New(logmel.Gemma4).Compute(clip) gives Data []float32 [T][128] and
// Mask []bool [T] (invalid frames are zero); the placeholder count is
// logmel.SoftTokens(len(clip), 16000, 40, 750) (mlx-vlm's rule, as the fixtures
// record), and logmel.PlaceholderRows says which encoder row fills each
// placeholder when that count exceeds the encoder's rows. The unified model
// takes logmel.UnifiedRows(clip, 640) instead.
//
// Video → video.Decode(ctx, data, video.Options{Audio: hasAudioTower}) gives
// Frames []Frame{Image *picture.RGB, Time seconds, Stamp "mm:ss"} (2 fps, at
// most 32, evenly spread over longer videos) to prepare with
// vision.Prepare(frame.Image, Params{MaxSoftTokens: 70, …}), and Audio
// (*audio.Audio, nil without a track).
//
// Microphone → mic.Start(mic.Options{}) then Levels() for the meter and Stop()
// for a 16 kHz mono *mic.Clip (Clip.WAV() for storage); a silent capture is
// mic.ErrNoInput, never a clip.
//
// Platform code (ImageIO/Core Image, AVFoundation via darwinkit) sits in
// _darwin.go files behind picture.Codec, audio.Decoder and video.Source; Linux
// uses libheif's heif-convert and ffmpeg/ffprobe in child processes.
package media
