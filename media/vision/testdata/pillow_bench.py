#!/usr/bin/python3
"""Pillow side of `make bench`: decode a JPEG and resize it with BICUBIC to the
Gemma-4 target size (what the reference processor does); prints the median wall and CPU ms.

usage: pillow_bench.py FILE WIDTH HEIGHT RUNS [resize|decode]
With "resize", only the resize of the already decoded image is timed; with
"decode", only open + convert("RGB")."""
import sys
import time

from PIL import Image


def main():
    path, w, h, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else ""
    decoded = Image.open(path).convert("RGB")
    times, cpus = [], []
    for _ in range(runs):
        s, c = time.perf_counter(), time.process_time()
        if mode == "resize":
            decoded.resize((w, h), resample=Image.BICUBIC)
        elif mode == "decode":
            Image.open(path).convert("RGB")
        else:
            im = Image.open(path)
            im = im.convert("RGB")
            im.resize((w, h), resample=Image.BICUBIC)
        times.append((time.perf_counter() - s) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    print("%.3f %.3f" % (sorted(times)[len(times) // 2], sorted(cpus)[len(cpus) // 2]))


if __name__ == "__main__":
    main()
