"""Write ember's bundled digits file from scikit-learn's copy of the UCI optical digits set.

Run once by a maintainer (scikit-learn is not an ember dependency):

    python tools/make_digits.py ember/data/datasets/_bundled/digits.npz
"""

import sys

import numpy as np
from sklearn.datasets import load_digits


def main(path: str) -> None:
    digits = load_digits()
    images = digits.images.astype(np.uint8)  # grey levels 0..16
    assert np.array_equal(images, digits.images)
    labels = digits.target.astype(np.int64)
    np.savez_compressed(path, images=images, labels=labels)


if __name__ == "__main__":
    main(sys.argv[1])
