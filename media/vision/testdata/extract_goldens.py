#!/usr/bin/python3
"""Copy the media goldens Perch's tests use out of the shared Gemma-4 fixtures.

usage: extract_goldens.py FIXTURES_DIR   (run from anywhere; writes under media/*/testdata)

Tensors are read straight from the safetensors files (json header + little-endian
data) and saved as .npy; only numpy is needed.
"""
import json, os, shutil, struct, sys
import numpy as np

DTYPES = {"F32": "<f4", "I32": "<i4", "U8": "u1"}
MEDIA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def tensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(body[a:b], dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
    return out


def save(dst, name, arr):
    os.makedirs(dst, exist_ok=True)
    np.save(os.path.join(dst, name + ".npy"), np.ascontiguousarray(arr))


def main(fx):
    v = tensors(os.path.join(fx, "vision-tiny", "golden.safetensors"))
    d = os.path.join(MEDIA, "vision", "testdata", "vision-tiny")
    for k in ("patches", "patch_positions", "patch_positions_padded"):
        save(d, k, v[k][0])
    shutil.copy(os.path.join(fx, "vision-tiny", "image.png"), d)

    u = tensors(os.path.join(fx, "vision-unified-tiny", "golden.safetensors"))
    d = os.path.join(MEDIA, "vision", "testdata", "vision-unified-tiny")
    for k in ("pixel_values", "image_position_ids"):
        save(d, k, u[k][0])
    shutil.copy(os.path.join(fx, "vision-unified-tiny", "image.png"), d)
    d = os.path.join(MEDIA, "logmel", "testdata", "vision-unified-tiny")
    for k in ("audio_input_features", "audio_input_features_mask"):
        save(d, k, u[k][0] if u[k].ndim > 1 else u[k])

    a = tensors(os.path.join(fx, "audio-tiny", "golden.safetensors"))
    d = os.path.join(MEDIA, "logmel", "testdata", "audio-tiny")
    for k in ("waveform", "window", "mel_filters"):
        save(d, k, a[k])
    for k in ("input_features", "input_features_mask"):
        save(d, k, a[k][0])
    d = os.path.join(MEDIA, "audio", "testdata", "audio-tiny")
    save(d, "waveform", a["waveform"])
    shutil.copy(os.path.join(fx, "audio-tiny", "audio.wav"), d)

    p = os.path.join(fx, "preprocess")
    d = os.path.join(MEDIA, "resample", "testdata", "preprocess")
    os.makedirs(d, exist_ok=True)
    for f in sorted(os.listdir(p)):
        if f.endswith(".png") or f == "cases.json":
            shutil.copy(os.path.join(p, f), d)
    d = os.path.join(MEDIA, "vision", "testdata", "preprocess")
    os.makedirs(d, exist_ok=True)
    for f in ("cases.json", "rescale.json"):
        shutil.copy(os.path.join(p, f), d)


if __name__ == "__main__":
    main(sys.argv[1])
