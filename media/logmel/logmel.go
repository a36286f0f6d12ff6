// Package logmel computes Gemma-4's audio features (the USM front end) from
// 16 kHz mono samples, exactly as the reference Gemma4AudioFeatureExtractor:
// zero-pad to a multiple of 128, prepend 160 zeros (semicausal), 320-sample
// frames every 160, periodic Hann window and frame product in float32,
// |rfft 512| in float64, 128 HTK mel bins (0-8 kHz, no norm), log(x + 1e-3),
// float32 out, and a frame mask (a frame is valid when its last sample is real;
// invalid frames are zero). research/gemma4.md §5.2; port of
// mlx-vlm's audio_feature_extractor.py _extract_spectrogram.
package logmel

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Params are the feature extractor's settings (processor_config.json
// "feature_extractor"); Gemma4 holds the values every Gemma-4 model ships.
type Params struct {
	SampleRate  int
	Bins        int     // feature_size: mel bins
	FrameLength int     // samples per frame (20 ms)
	HopLength   int     // samples between frames (10 ms)
	FFTLength   int     // power of two >= FrameLength
	MinFreq     float64 // Hz
	MaxFreq     float64 // Hz
	MelFloor    float64 // added before the log
	PadMultiple int     // waveform is zero-padded to a multiple of this
}

// Gemma4 is the USM front end's fixed configuration.
var Gemma4 = Params{SampleRate: 16000, Bins: 128, FrameLength: 320, HopLength: 160, FFTLength: 512,
	MinFreq: 0, MaxFreq: 8000, MelFloor: 1e-3, PadMultiple: 128}

// Features are log-mel frames.
type Features struct {
	Frames int
	Bins   int
	Data   []float32 // [Frames][Bins]
	Mask   []bool    // [Frames] true = valid
}

// Valid counts the valid frames.
func (f *Features) Valid() int {
	n := 0
	for _, v := range f.Mask {
		if v {
			n++
		}
	}
	return n
}

// Extractor holds the precomputed window, FFT tables and mel bank.
type Extractor struct {
	p      Params
	window []float32
	fft    *realFFT
	mel    []band // [Bins]
}

// band is one mel filter's non-zero run over FFT bins.
type band struct {
	first int
	w     []float64 // float32 filter values, widened as numpy's matmul does
}

// New prepares an extractor.
func New(p Params) (*Extractor, error) {
	if p.SampleRate <= 0 || p.Bins <= 0 || p.FrameLength <= 0 || p.HopLength <= 0 || p.FFTLength < p.FrameLength ||
		p.FFTLength&(p.FFTLength-1) != 0 || p.PadMultiple <= 0 || p.MaxFreq <= p.MinFreq {
		return nil, fmt.Errorf("logmel: bad parameters %+v", p)
	}
	e := &Extractor{p: p, window: hann(p.FrameLength), fft: newRealFFT(p.FFTLength)}
	filters := MelFilters(p)
	nFreq := p.FFTLength/2 + 1
	e.mel = make([]band, p.Bins)
	for m := 0; m < p.Bins; m++ {
		first, last := -1, -1
		for k := 0; k < nFreq; k++ {
			if filters[k*p.Bins+m] != 0 {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		if first < 0 {
			continue
		}
		b := band{first: first, w: make([]float64, last-first+1)}
		for k := first; k <= last; k++ {
			b.w[k-first] = float64(filters[k*p.Bins+m])
		}
		e.mel[m] = b
	}
	return e, nil
}

// hann is the periodic Hann window in float32 (the reference's exact table for 320).
func hann(n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		if n == 320 {
			w[i] = math.Float32frombits(hann320[i])
			continue
		}
		arg := float32(2*math.Pi) * float32(i) / float32(n)
		w[i] = 0.5 - 0.5*float32(math.Cos(float64(arg)))
	}
	return w
}

// MelFilters returns the [FFTLength/2+1][Bins] HTK triangular filter bank
// (float64 maths, stored as float32 like the reference).
func MelFilters(p Params) []float32 {
	toMel := func(f float64) float64 { return 2595.0 * math.Log10(1.0+f/700.0) }
	toHz := func(m float64) float64 { return 700.0 * (math.Pow(10, m/2595.0) - 1.0) }
	nFreq := p.FFTLength/2 + 1
	hz := linspace(toMel(p.MinFreq), toMel(p.MaxFreq), p.Bins+2)
	for i := range hz {
		hz[i] = toHz(hz[i])
	}
	fft := linspace(0, float64(p.SampleRate/2), nFreq)
	out := make([]float32, nFreq*p.Bins)
	for k, f := range fft {
		for m := 0; m < p.Bins; m++ {
			down := -(hz[m] - f) / (hz[m+1] - hz[m])
			up := (hz[m+2] - f) / (hz[m+2] - hz[m+1])
			out[k*p.Bins+m] = float32(max(0, min(down, up)))
		}
	}
	return out
}

// linspace matches numpy.linspace: start + i·step, last element exactly stop.
func linspace(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	step := (stop - start) / float64(n-1)
	for i := range out {
		out[i] = float64(float64(i)*step) + start
	}
	out[n-1] = stop
	return out
}

// ErrTooShort is returned for audio shorter than one frame.
var ErrTooShort = errors.New("audio too short for one feature frame")

// Compute returns the log-mel features of 16 kHz mono samples.
func (e *Extractor) Compute(samples []float32) (*Features, error) {
	p := e.p
	n := len(samples)
	padded := (n + p.PadMultiple - 1) / p.PadMultiple * p.PadMultiple
	left := p.FrameLength / 2
	total := padded + left
	span := p.FrameLength + 1 // the reference unfolds frame_length+1 samples, then drops the last
	if total < span || n == 0 {
		return nil, fmt.Errorf("%w (%d samples)", ErrTooShort, n)
	}
	frames := (total-span)/p.HopLength + 1
	f := &Features{Frames: frames, Bins: p.Bins, Data: make([]float32, frames*p.Bins), Mask: make([]bool, frames)}
	// sample(i) reads the left-padded, zero-extended waveform.
	sample := func(i int) float32 {
		i -= left
		if i < 0 || i >= n {
			return 0
		}
		return samples[i]
	}
	workers := min(runtime.GOMAXPROCS(0), max(frames/64, 1))
	var wg sync.WaitGroup
	for wi := 0; wi < workers; wi++ {
		f0, f1 := frames*wi/workers, frames*(wi+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float64, p.FFTLength)
			mag := make([]float64, p.FFTLength/2+1)
			re, im := make([]float64, p.FFTLength/2), make([]float64, p.FFTLength/2)
			for fr := f0; fr < f1; fr++ {
				last := fr*p.HopLength + p.FrameLength // the frame's (unused) 321st sample
				valid := last-left < n && last >= left
				f.Mask[fr] = valid
				if !valid {
					continue // invalid frames stay zero
				}
				start := fr * p.HopLength
				for i := 0; i < p.FrameLength; i++ {
					buf[i] = float64(sample(start+i) * e.window[i]) // float32 product, widened for the FFT
				}
				clear(buf[p.FrameLength:])
				e.fft.magnitude(buf, mag, re, im)
				row := f.Data[fr*p.Bins : (fr+1)*p.Bins]
				for m, b := range e.mel {
					var s float64
					for j, w := range b.w {
						s += mag[b.first+j] * w
					}
					row[m] = float32(math.Log(s + p.MelFloor))
				}
			}
		}()
	}
	wg.Wait()
	return f, nil
}
