package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"perch/media/inspect"
)

func init() {
	RegisterStreams("media", "inspect or preprocess a media file", func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return media(args, stdout, stderr)
	})
}

const mediaUsage = `usage:
  perch media inspect FILE [--json] [--max-soft-tokens N]
  perch media preprocess FILE --out DIR [--max-soft-tokens N]

inspect shows what Gemma-4 would get from an image, audio or video file;
preprocess writes it (resized PNG, patches and positions, 16 kHz samples and
log-mel as .npy) so it can be compared with the reference outside Go.`

func media(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, mediaUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("media "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("out", "", "folder for preprocess output")
	budget := fs.Int("max-soft-tokens", 280, "image soft-token budget (70, 140, 280, 560, 1120)")
	frameBudget := fs.Int("frame-soft-tokens", 70, "soft tokens per video frame")
	fps := fs.Float64("fps", 2, "video frames sampled per second")
	maxFrames := fs.Int("max-frames", 32, "most video frames")
	split := fs.Bool("split", false, "cut long audio into 30 s clips instead of using the first 30 s")
	// Flags may come before or after FILE.
	var files []string
	rest := args[1:]
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files, rest = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	if len(files) != 1 || (sub != "inspect" && sub != "preprocess") || (sub == "preprocess" && *out == "") {
		fmt.Fprintln(stderr, mediaUsage)
		return 2
	}
	data, err := readMediaFile(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "perch media: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := inspect.Options{MaxSoftTokens: *budget, FrameSoftTokens: *frameBudget}
	opts.Video.FPS, opts.Video.MaxFrames = *fps, *maxFrames
	opts.Audio.Split = *split
	if sub == "preprocess" {
		written, err := inspect.Preprocess(ctx, data, *out, opts)
		if err != nil {
			fmt.Fprintf(stderr, "perch media: %s: %v\n", files[0], err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %d files to %s: %s\n", len(written), *out, strings.Join(written, " "))
		return 0
	}
	rep, err := inspect.Inspect(ctx, data, opts)
	if err != nil {
		fmt.Fprintf(stderr, "perch media: %s: %v\n", files[0], err)
		return 1
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 1
		}
		return 0
	}
	printReport(stdout, files[0], rep)
	return 0
}

// readMediaFile reads a regular file only, with a size cap (no FIFOs, devices
// or directories).
func readMediaFile(path string) ([]byte, error) {
	const maxBytes = 1 << 30
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxBytes {
		return nil, fmt.Errorf("%s is %d MiB; the limit is %d MiB", path, st.Size()>>20, maxBytes>>20)
	}
	return os.ReadFile(path)
}

func printReport(w io.Writer, name string, r *inspect.Report) {
	fmt.Fprintf(w, "%s: %s (%s, %d bytes)\n", name, r.Kind, r.Format, r.Bytes)
	if im := r.Image; im != nil {
		fmt.Fprintf(w, "  stored %dx%d, EXIF orientation %d -> upright %dx%d\n", im.Stored.W, im.Stored.H, im.Orientation, im.Upright.W, im.Upright.H)
		if im.Frames > 1 {
			fmt.Fprintf(w, "  animated: %d frames (the first is used)\n", im.Frames)
		}
		fmt.Fprintf(w, "  model input at %d soft tokens: resized to %dx%d (%s), %d soft tokens\n", im.MaxSoftTokens, im.Target.W, im.Target.H, im.Branch, im.SoftTokens)
		fmt.Fprintf(w, "  SigLIP: %d patches of 16 px (%d rows padded); unified: %d rows of 48 px\n", im.SigLIPPatches, im.SigLIPRows, im.UnifiedRows)
	}
	if a := r.Audio; a != nil {
		printAudio(w, "  ", a)
	}
	if v := r.Video; v != nil {
		fmt.Fprintf(w, "  %.2f s, %dx%d (rotation %d°), %.3g fps", v.Duration, v.Size.W, v.Size.H, v.Rotation, v.FPS)
		if v.FrameCount > 0 {
			fmt.Fprintf(w, ", %d frames", v.FrameCount)
		}
		fmt.Fprintln(w)
		stamps := make([]string, len(v.Sampled))
		for i, s := range v.Sampled {
			stamps[i] = s.Stamp
		}
		fmt.Fprintf(w, "  %d frames sampled at %s\n", len(v.Sampled), strings.Join(stamps, " "))
		fmt.Fprintf(w, "  each frame resized to %dx%d: %d soft tokens, %d for the video\n", v.FrameTarget.W, v.FrameTarget.H, v.FrameSoftTokens, v.SoftTokens)
		if v.Audio != nil {
			fmt.Fprintln(w, "  audio track:")
			printAudio(w, "    ", v.Audio)
		} else {
			fmt.Fprintln(w, "  no audio track")
		}
	}
	if r.Notice != "" {
		fmt.Fprintf(w, "  note: %s\n", r.Notice)
	}
}

func printAudio(w io.Writer, indent string, a *inspect.AudioReport) {
	fmt.Fprintf(w, "%s%.2f s, %d Hz, %d channel(s)\n", indent, a.Duration, a.SampleRate, a.Channels)
	for i, c := range a.Clips {
		fmt.Fprintf(w, "%sclip %d: %d samples at 16 kHz, %d soft tokens; %d mel frames (%d valid), %d encoder frames (%d valid)\n",
			indent, i, c.Samples, c.SoftTokens, c.MelFrames, c.ValidMelFrames, c.EncoderFrames, c.ValidEncoderFrames)
	}
}
