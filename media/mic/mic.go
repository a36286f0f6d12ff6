// Package mic records a voice clip from the default microphone with malgo
// (miniaudio): float32 at the device's own rate, a live level (RMS) stream
// for a meter, a 30 s cap, then 16 kHz mono through media/audio's
// band-limited resampler. A capture of pure zeros (what macOS delivers when
// microphone access is denied) is an error, never a clip.
package mic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gen2brain/malgo"

	"perch/media/audio"
)

// NullBackend is miniaudio's silent null device, for tests without audio
// hardware. malgo v0.11.24's BackendNull constant is one short (it omits
// ma_backend_custom), hence the +1.
var NullBackend = malgo.Backend(malgo.BackendNull + 1)

var (
	// ErrNoInput: the capture was silent to the last bit.
	ErrNoInput = errors.New("no microphone input — check permission (macOS: System Settings › Privacy & Security › Microphone)")
	// ErrNoDevice: no capture device could be opened.
	ErrNoDevice = errors.New("no microphone found")
	// ErrDenied: the user or a policy refused microphone access.
	ErrDenied = errors.New("microphone access denied — allow Perch in System Settings › Privacy & Security › Microphone")
)

// Options configure a recording.
type Options struct {
	MaxSeconds float64         // 0 means 30
	Backends   []malgo.Backend // nil means the platform's defaults
}

// Clip is a finished recording.
type Clip struct {
	Samples    []float32 // 16 kHz mono
	DeviceRate int
	Channels   int
	Capped     bool // stopped at MaxSeconds
}

// WAV encodes the clip as a 16-bit 16 kHz mono WAV file.
func (c *Clip) WAV() ([]byte, error) { return audio.EncodeWAV(c.Samples, audio.SampleRate) }

// Recorder is one running capture.
type Recorder struct {
	ctx    *malgo.AllocatedContext
	dev    *malgo.Device
	levels chan float32
	full   chan struct{}
	buf    *buffer
	once   sync.Once
}

// buffer accumulates interleaved float32 frames up to a cap.
type buffer struct {
	mu       sync.Mutex
	samples  []float32
	limit    int // samples (frames × channels)
	rate     int
	channels int
	capped   bool
	full     chan struct{}
	levels   chan float32
}

// add appends one callback's worth of little-endian float32 samples and
// publishes its RMS; it reports when the cap has been reached.
func (b *buffer) add(raw []byte) {
	n := len(raw) / 4
	var sum float64
	b.mu.Lock()
	for i := 0; i < n; i++ {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		sum += float64(v) * float64(v)
		if len(b.samples) < b.limit {
			b.samples = append(b.samples, v)
		} else if !b.capped {
			b.capped = true
			close(b.full)
		}
	}
	b.mu.Unlock()
	if n > 0 {
		select {
		case b.levels <- float32(math.Sqrt(sum / float64(n))):
		default: // the meter is behind; drop this reading
		}
	}
}

// finish converts the capture to a 16 kHz mono clip.
func (b *buffer) finish() (*Clip, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	silent := true
	for _, v := range b.samples {
		if v != 0 {
			silent = false
			break
		}
	}
	if silent {
		return nil, ErrNoInput
	}
	pcm := &audio.PCM{Rate: b.rate, Channels: b.channels, Samples: b.samples}
	a, err := audio.FromPCM(pcm, audio.Options{MaxSeconds: float64(b.limit) / float64(b.rate*b.channels)})
	if err != nil {
		return nil, err
	}
	return &Clip{Samples: a.Clips[0], DeviceRate: b.rate, Channels: b.channels, Capped: b.capped}, nil
}

func newBuffer(rate, channels int, maxSeconds float64) *buffer {
	limit := int(maxSeconds*float64(rate)) * channels
	return &buffer{samples: make([]float32, 0, limit), limit: limit, rate: rate, channels: channels,
		full: make(chan struct{}), levels: make(chan float32, 64)}
}

// Start opens the default capture device and starts recording.
func Start(opts Options) (*Recorder, error) {
	if err := checkPermission(); err != nil {
		return nil, err
	}
	maxSec := opts.MaxSeconds
	if maxSec <= 0 {
		maxSec = 30
	}
	mctx, err := malgo.InitContext(opts.Backends, malgo.ContextConfig{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the audio system is unavailable (%v)", ErrNoDevice, err)
	}
	cfg := malgo.DefaultDeviceConfig(malgo.Capture)
	cfg.Capture.Format = malgo.FormatF32
	cfg.Capture.Channels = 0 // the device's own channel count
	cfg.SampleRate = 0       // the device's own rate
	r := &Recorder{ctx: mctx}
	var buf *buffer
	ready := make(chan struct{})
	onData := func(_, in []byte, _ uint32) {
		<-ready
		buf.add(in)
	}
	dev, err := malgo.InitDevice(mctx.Context, cfg, malgo.DeviceCallbacks{Data: onData})
	if err != nil {
		mctx.Uninit()
		mctx.Free()
		return nil, fmt.Errorf("%w (%v)", ErrNoDevice, err)
	}
	rate, ch := int(dev.SampleRate()), int(dev.CaptureChannels())
	if rate < audio.MinRate || rate > audio.MaxRate || ch < 1 || ch > audio.MaxChannels {
		dev.Uninit()
		mctx.Uninit()
		mctx.Free()
		return nil, fmt.Errorf("%w: device offers %d channels at %d Hz", ErrNoDevice, ch, rate)
	}
	buf = newBuffer(rate, ch, maxSec)
	close(ready)
	r.dev, r.buf, r.levels, r.full = dev, buf, buf.levels, buf.full
	if err := dev.Start(); err != nil {
		r.release()
		return nil, fmt.Errorf("%w: could not start capture (%v)", ErrNoDevice, err)
	}
	return r, nil
}

// Levels streams the RMS of each captured chunk (0..1), for a meter. Readings
// are dropped, not queued, when the reader falls behind.
func (r *Recorder) Levels() <-chan float32 { return r.levels }

// Full is closed when the recording reaches its cap; call Stop then.
func (r *Recorder) Full() <-chan struct{} { return r.full }

// Stop ends the recording and returns the 16 kHz mono clip.
func (r *Recorder) Stop() (*Clip, error) {
	r.release()
	return r.buf.finish()
}

func (r *Recorder) release() {
	r.once.Do(func() {
		if r.dev != nil {
			r.dev.Stop()
			r.dev.Uninit()
		}
		r.ctx.Uninit()
		r.ctx.Free()
	})
}
