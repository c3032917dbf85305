"""Extracts scikit-learn's copy of the UCI handwritten digits into examples/data/digits.npz.

Run once, with scikit-learn installed (it is not a dependency of xjax):

    python tools/extract_digits.py [--out examples/data/digits.npz]

The file holds `images` (uint8[1797, 8, 8], block counts 0..16) and `labels`
(uint8[1797], digits 0..9), in scikit-learn's order. See examples/data/README.md.
"""
import argparse
import hashlib
import pathlib

import numpy as np
import sklearn
from sklearn.datasets import load_digits

DEFAULT_OUT = pathlib.Path(__file__).resolve().parent.parent / "examples" / "data" / "digits.npz"


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
  out = parser.parse_args().out

  digits = load_digits()
  images, labels = digits.images, digits.target
  # The bundled CSV stores small integers as floats; check before narrowing to uint8.
  assert images.shape == (1797, 8, 8) and labels.shape == (1797,), (images.shape, labels.shape)
  assert np.array_equal(images, np.round(images)) and images.min() == 0 and images.max() == 16
  assert set(np.unique(labels)) == set(range(10))
  images, labels = images.astype(np.uint8), labels.astype(np.uint8)

  np.savez_compressed(out, images=images, labels=labels)
  digest = hashlib.sha256(images.tobytes() + labels.tobytes()).hexdigest()
  print(f"wrote {out} ({out.stat().st_size} bytes) from scikit-learn {sklearn.__version__}")
  print(f"sha256 of images.tobytes() + labels.tobytes(): {digest}")


if __name__ == "__main__":
  main()
