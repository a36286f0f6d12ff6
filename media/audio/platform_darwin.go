//go:build darwin

package audio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"perch/media/internal/apple"
	"perch/media/sniff"
)

// avExtensions are the containers AVFoundation opens, by the extension it expects.
var avExtensions = map[sniff.Format]string{
	sniff.WAV: "wav", sniff.MP3: "mp3", sniff.M4A: "m4a", sniff.AAC: "aac", sniff.FLAC: "flac",
	sniff.AIFF: "aiff", sniff.CAF: "caf", sniff.MP4: "mp4", sniff.MOV: "mov", sniff.M4V: "m4v",
}

// platformDecoder reads audio with AVFoundation: an AVAssetReader converts the
// first audio track to 48 kHz stereo float32 PCM and an AVAssetWriter stores
// it as a WAV, which the Go WAV reader then takes (downmix and the 16 kHz
// resample stay in Go, as on Linux). Containers AVFoundation cannot open
// (WebM, Ogg, MKV) go to ffmpeg when it is installed (Homebrew).
type platformDecoder struct{}

const avRate, avChannels = 48000, 2

func (platformDecoder) Decode(ctx context.Context, data []byte, maxSeconds float64) (*PCM, float64, error) {
	t, err := sniff.Detect(data)
	if err != nil {
		return nil, 0, err
	}
	ext, ok := avExtensions[t.Format]
	if !ok {
		if _, err := exec.LookPath("ffmpeg"); err != nil {
			return nil, 0, fmt.Errorf("%s audio needs ffmpeg on macOS (brew install ffmpeg)", t.Format)
		}
		return DecodeFFmpeg(ctx, data, maxSeconds)
	}
	in, cleanup, err := apple.TempFile(data, ext)
	if err != nil {
		return nil, 0, err
	}
	defer cleanup()
	out := filepath.Join(filepath.Dir(in), "pcm.wav")
	var duration float64
	objc.WithAutoreleasePool(func() { duration, err = avTranscode(ctx, in, out, maxSeconds) })
	if err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", t.Format, err)
	}
	wav, err := os.ReadFile(out)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", t.Format, err)
	}
	pcm, _, err := decodeWAV(wav, maxSeconds)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding %s: %w", t.Format, err)
	}
	return pcm, duration, nil
}

func lpcmSettings() map[string]objc.IObject {
	return map[string]objc.IObject{
		"AVFormatIDKey":               foundation.Number_NumberWithUnsignedInt(0x6c70636d), // 'lpcm'
		"AVSampleRateKey":             foundation.Number_NumberWithDouble(avRate),
		"AVNumberOfChannelsKey":       foundation.Number_NumberWithInt(avChannels),
		"AVLinearPCMBitDepthKey":      foundation.Number_NumberWithInt(32),
		"AVLinearPCMIsFloatKey":       foundation.Number_NumberWithBool(true),
		"AVLinearPCMIsBigEndianKey":   foundation.Number_NumberWithBool(false),
		"AVLinearPCMIsNonInterleaved": foundation.Number_NumberWithBool(false),
	}
}

// avTranscode copies up to maxSeconds of the first audio track of in to a
// float32 WAV at out and returns the asset's duration.
func avTranscode(ctx context.Context, in, out string, maxSeconds float64) (float64, error) {
	asset := avfoundation.NewURLAssetWithURLOptions(foundation.NewURLFileURLWithPath(in), nil)
	duration := apple.Seconds(asset.Duration())
	var track avfoundation.AssetTrack
	for _, tr := range asset.Tracks() {
		if tr.MediaType() == avfoundation.MediaTypeAudio {
			track = tr
			break
		}
	}
	if track.IsNil() {
		return 0, ErrNoAudio
	}
	reader := avfoundation.NewAssetReaderWithAssetError(asset, nil)
	if reader.IsNil() {
		return 0, errors.New("AVFoundation cannot read this file")
	}
	output := avfoundation.NewAssetReaderTrackOutputWithTrackOutputSettings(track, lpcmSettings())
	reader.AddOutput(output)
	reader.SetTimeRange(coremedia.TimeRange{Start: apple.Time(0), Duration: apple.Time(maxSeconds + 0.5)})
	writer := avfoundation.NewAssetWriterWithURLFileTypeError(foundation.NewURLFileURLWithPath(out), avfoundation.FileTypeWAVE, nil)
	if writer.IsNil() {
		return 0, errors.New("AVFoundation cannot write PCM")
	}
	input := avfoundation.NewAssetWriterInputWithMediaTypeOutputSettings(avfoundation.MediaTypeAudio, lpcmSettings())
	input.SetExpectsMediaDataInRealTime(false)
	writer.AddInput(input)
	if !reader.StartReading() || !writer.StartWriting() {
		return 0, fmt.Errorf("AVFoundation could not start: %s", reader.Error().LocalizedDescription())
	}
	writer.StartSessionAtSourceTime(apple.Time(0))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sb := output.CopyNextSampleBuffer()
		if sb == 0 {
			break
		}
		for !input.IsReadyForMoreMediaData() {
			if ctx.Err() != nil || time.Now().After(deadline) {
				apple.Release(uintptr(sb))
				reader.CancelReading()
				writer.CancelWriting()
				return 0, errors.New("audio conversion stopped or timed out")
			}
			time.Sleep(time.Millisecond)
		}
		ok := input.AppendSampleBuffer(sb)
		apple.Release(uintptr(sb))
		if !ok {
			return 0, errors.New("AVFoundation could not convert the audio")
		}
	}
	if reader.Status() == avfoundation.AssetReaderStatusFailed {
		writer.CancelWriting()
		return 0, fmt.Errorf("AVFoundation: %s", reader.Error().LocalizedDescription())
	}
	input.MarkAsFinished()
	done := make(chan struct{})
	writer.FinishWritingWithCompletionHandler(func() { close(done) })
	select {
	case <-done:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(time.Minute):
		return 0, errors.New("AVFoundation did not finish writing")
	}
	return duration, nil
}
