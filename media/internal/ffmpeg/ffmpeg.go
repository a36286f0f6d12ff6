// Package ffmpeg runs Debian's ffmpeg and ffprobe as child processes for the
// Linux media paths: untrusted bytes go to a private temp file, the demuxer is
// forced from the sniffed type, only the file protocol is allowed, and every
// run has a time limit and a cap on what it may print.
package ffmpeg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"perch/media/sniff"
)

// Timeout bounds one tool run.
var Timeout = 120 * time.Second

// ErrOutputTooLarge is returned when a tool prints more than its cap.
var ErrOutputTooLarge = errors.New("ffmpeg output over its size cap")

// Lookup finds a tool or explains how to get it.
func Lookup(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("this file needs %s, which is not installed (Debian/Ubuntu: apt install ffmpeg; macOS: brew install ffmpeg)", name)
	}
	return p, nil
}

// demuxers maps sniffed formats to ffmpeg's demuxer names.
var demuxers = map[sniff.Format]string{
	sniff.WAV: "wav", sniff.MP3: "mp3", sniff.M4A: "mov", sniff.AAC: "aac", sniff.FLAC: "flac",
	sniff.OGG: "ogg", sniff.Opus: "ogg", sniff.AIFF: "aiff", sniff.CAF: "caf",
	sniff.MP4: "mov", sniff.MOV: "mov", sniff.M4V: "mov", sniff.WebM: "matroska", sniff.MKV: "matroska", sniff.OGV: "ogg",
}

// Input is untrusted media written to a private temp file.
type Input struct {
	Path   string
	Format sniff.Format
	dir    string
}

// NewInput sniffs data and writes it to a temp file; call Close when done.
func NewInput(data []byte) (*Input, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, err
	}
	if _, ok := demuxers[t.Format]; !ok {
		return nil, fmt.Errorf("%s files are not read through ffmpeg", t.Format)
	}
	sweepOnce.Do(sweepStale)
	dir, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	in := &Input{Path: filepath.Join(dir, "input."+string(t.Format)), Format: t.Format, dir: dir}
	if err := os.WriteFile(in.Path, data, 0o600); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// Close removes the temp file.
func (in *Input) Close() error { return os.RemoveAll(in.dir) }

// Args returns the safe input arguments: protocol whitelist, forced demuxer.
func (in *Input) Args() []string {
	return []string{"-protocol_whitelist", "file", "-f", demuxers[in.Format], "-i", in.Path}
}

// Run runs tool with args and returns its stdout, at most maxOut bytes.
func Run(ctx context.Context, tool string, args []string, maxOut int64) ([]byte, error) {
	path, err := Lookup(tool)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, maxOut+1))
	if int64(len(out)) > maxOut {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, ErrOutputTooLarge
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s did not finish within %v", tool, Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("%s failed: %s", tool, lastLine(stderr.String()))
	}
	if readErr != nil {
		return nil, readErr
	}
	return out, nil
}

type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "(no message)"
	}
	return s
}

// Stream is the part of ffprobe's stream description media uses.
type Stream struct {
	Index        int    `json:"index"`
	CodecType    string `json:"codec_type"`
	CodecName    string `json:"codec_name"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	SampleRate   string `json:"sample_rate"`
	Channels     int    `json:"channels"`
	AvgFrameRate string `json:"avg_frame_rate"`
	RFrameRate   string `json:"r_frame_rate"`
	Duration     string `json:"duration"`
	NbFrames     string `json:"nb_frames"`
	Tags         struct {
		Rotate string `json:"rotate"`
	} `json:"tags"`
	SideData []struct {
		Type     string  `json:"side_data_type"`
		Rotation float64 `json:"rotation"`
	} `json:"side_data_list"`
	Disposition struct {
		AttachedPic int `json:"attached_pic"`
	} `json:"disposition"`
}

// Probe is ffprobe's description of a file.
type Probe struct {
	Streams []Stream `json:"streams"`
	Format  struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

// ProbeInput runs ffprobe on in.
func ProbeInput(ctx context.Context, in *Input) (*Probe, error) {
	args := append([]string{"-v", "error", "-print_format", "json", "-show_format", "-show_streams"}, in.Args()...)
	out, err := Run(ctx, "ffprobe", args, 4<<20)
	if err != nil {
		return nil, err
	}
	return ParseProbe(out)
}

// ParseProbe parses ffprobe's JSON output.
func ParseProbe(b []byte) (*Probe, error) {
	var p Probe
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("reading ffprobe output: %w", err)
	}
	return &p, nil
}

// Seconds parses a duration field ("12.345000"); 0 when absent or invalid.
func Seconds(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1e9 || v != v {
		return 0
	}
	return v
}

// Rate parses a frame rate ("30000/1001"); 0 when absent or invalid.
func Rate(s string) float64 {
	num, den, ok := strings.Cut(s, "/")
	if !ok {
		return Seconds(s)
	}
	n, err1 := strconv.ParseFloat(num, 64)
	d, err2 := strconv.ParseFloat(den, 64)
	if err1 != nil || err2 != nil || d <= 0 || n <= 0 || n/d > 1e4 {
		return 0
	}
	return n / d
}

// FirstStream returns the first stream of a type ("audio", "video"),
// skipping cover art.
func (p *Probe) FirstStream(kind string) *Stream {
	for i := range p.Streams {
		s := &p.Streams[i]
		if s.CodecType == kind && s.Disposition.AttachedPic == 0 {
			return s
		}
	}
	return nil
}
