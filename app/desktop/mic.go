package desktop

import (
	"errors"
	"math"
	"sync"
	"time"

	"perch/media/audio"
	"perch/media/mic"
	"perch/ui"
)

// micRecorder records voice clips with media/mic for the composer.
type micRecorder struct{}

// newRecorder returns the microphone recorder.
func newRecorder() ui.Recorder { return micRecorder{} }

func (micRecorder) Start(max time.Duration) (ui.Recording, error) {
	r, err := mic.Start(mic.Options{MaxSeconds: max.Seconds()})
	if err != nil {
		return nil, micError(err)
	}
	rec := &micRecording{r: r, levels: make(chan float64, 32), done: make(chan struct{})}
	go rec.forward()
	return rec, nil
}

// micRecording adapts a mic.Recorder: levels on a dB scale for the meter,
// the channel closed when the clip ends (Stop, Cancel or the 30 s cap).
type micRecording struct {
	r      *mic.Recorder
	levels chan float64
	done   chan struct{}
	once   sync.Once
}

func (m *micRecording) forward() {
	defer close(m.levels)
	for {
		select {
		case l := <-m.r.Levels():
			select {
			case m.levels <- meterLevel(float64(l)):
			default:
			}
		case <-m.r.Full():
			return
		case <-m.done:
			return
		}
	}
}

// meterLevel maps an RMS level to 0..1 over -50..0 dBFS, so speech moves the meter.
func meterLevel(rms float64) float64 {
	if rms <= 0 {
		return 0
	}
	db := 20 * math.Log10(rms)
	return min(max((db+50)/50, 0.02), 1)
}

func (m *micRecording) Levels() <-chan float64 { return m.levels }

func (m *micRecording) Stop() ([]byte, time.Duration, error) {
	m.once.Do(func() { close(m.done) })
	clip, err := m.r.Stop()
	if err != nil {
		return nil, 0, micError(err)
	}
	wav, err := clip.WAV()
	if err != nil {
		return nil, 0, err
	}
	return wav, time.Duration(len(clip.Samples)) * time.Second / audio.SampleRate, nil
}

func (m *micRecording) Cancel() {
	m.once.Do(func() { close(m.done) })
	m.r.Stop()
}

// micError says how to fix what went wrong.
func micError(err error) error {
	switch {
	case errors.Is(err, mic.ErrDenied):
		return errors.New("Perch may not use the microphone. Open System Settings → Privacy & Security → Microphone, turn Perch on, then try again.")
	case errors.Is(err, mic.ErrNoInput):
		return errors.New("The microphone sent only silence. On a Mac, open System Settings → Privacy & Security → Microphone and turn Perch on; otherwise check that the input is not muted.")
	case errors.Is(err, mic.ErrNoDevice):
		return errors.New("No microphone was found. Plug one in, or choose an input in your system's sound settings, then try again.")
	}
	return err
}
