#!/usr/bin/python3
"""numpy side of `make bench`: the reference log-mel (Gemma4AudioFeatureExtractor's
_extract_spectrogram semantics) on a 30 s signal; prints the median wall and CPU milliseconds.

usage: logmel_numpy.py RUNS"""
import sys
import time

import numpy as np


def mel_filters():
    def to_mel(f): return 2595.0 * np.log10(1.0 + f / 700.0)
    def to_hz(m): return 700.0 * (np.power(10, m / 2595.0) - 1.0)
    hz = to_hz(np.linspace(to_mel(0.0), to_mel(8000.0), 130))
    fft = np.linspace(0, 8000, 257)
    slopes = hz[None, :] - fft[:, None]
    diff = np.diff(hz)
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    return np.maximum(0, np.minimum(down, up)).astype(np.float32)


def extract(wave, filters, window):
    n = len(wave)
    padded = np.pad(wave, (0, (-n) % 128))
    mask = np.pad(np.ones(n, dtype=bool), (0, len(padded) - n))
    x = np.pad(padded, (160, 0))
    mask = np.pad(mask, (160, 0))
    frames = np.lib.stride_tricks.sliding_window_view(x, 321)[::160][:, :320]
    spec = np.abs(np.fft.rfft(frames * window, n=512, axis=-1))
    mel = np.log(spec @ filters + 1e-3).astype(np.float32)
    valid = mask[320::160][: len(mel)]
    mel[~valid] = 0
    return mel, valid


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    t = np.arange(480000) / 16000
    wave = (0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t) + 0.05 * np.sin(np.arange(480000) * 0.37)).astype(np.float32)
    filters = mel_filters()
    window = (np.float32(0.5) - np.float32(0.5) * np.cos(np.float32(2 * np.pi) * np.arange(320, dtype=np.float32) / np.float32(320))).astype(np.float32)
    times, cpus = [], []
    for _ in range(runs):
        s, c = time.perf_counter(), time.process_time()
        extract(wave, filters, window)
        times.append((time.perf_counter() - s) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    print("%.3f %.3f" % (sorted(times)[len(times) // 2], sorted(cpus)[len(cpus) // 2]))


if __name__ == "__main__":
    main()
