#!/usr/bin/python3
"""Write small JPEG/WebP files and Pillow's decode of them (RGB PNG), so the Go
decoders can be compared with what the reference sees.  Needs numpy + Pillow."""
import numpy as np
from PIL import Image

rng = np.random.default_rng(7)
h, w = 61, 97  # odd sizes exercise the chroma edges
y, x = np.mgrid[0:h, 0:w]
img = np.stack([x * 255 / w, y * 255 / h, 128 + 100 * np.sin(x / 5.0) * np.cos(y / 7.0)], -1)
img[20:40, 30:60] = [250, 20, 30]  # a saturated block with sharp chroma edges
img = np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)
src = Image.fromarray(img, "RGB")
src.save("photo.png")
for name, sub in (("420", 2), ("422", 1), ("444", 0)):
    src.save(f"photo{name}.jpg", quality=90, subsampling=sub)
    Image.open(f"photo{name}.jpg").convert("RGB").save(f"photo{name}.jpg.pil.png")
src.save("photo.webp", quality=90)
Image.open("photo.webp").convert("RGB").save("photo.webp.pil.png")
