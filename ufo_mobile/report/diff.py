"""What changed between two screenshots: the regions whose pixels differ, as boxes.

The two images are compared at a small common size (``COMPARE_SIDE`` on their longest side), so
noise of a pixel or two and JPEG-like dithering do not count. A pixel changed when one of its
channels moved by more than ``THRESHOLD``; changed pixels are gathered into cells of ``CELL``
compared pixels, touching cells (eight neighbours) form one region, and each region's bounding box
is given back in the first image's own pixels. Images of different sizes (the phone rotated, or a
screenshot at another resolution) are not compared: ``changed_boxes`` says so by returning None.

Pillow and numpy only: OpenCV's ``absdiff`` and connected components would do the same, but it is
not a dependency of this package, and the grids here are a few thousand cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageChops

COMPARE_SIDE = 300  # the longest side both images are compared at (a kept 270x600 copy decodes at half scale to it)
THRESHOLD = 32  # 0..255: how far one channel must move for a pixel to count as changed
CELL = 6  # compared pixels per side of a cell: changed pixels closer than this join one region
MAX_BOXES = 12  # more regions than this are given as one box around them all

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Change:
    """The outcome of comparing two screens: ``boxes`` in the first image's pixels (empty when
    nothing changed), or ``note`` saying why they could not be compared (then ``boxes`` is empty)."""

    boxes: tuple[Box, ...] = ()
    note: str = ""
    size: tuple[int, int] = (0, 0)  # the first image's size, the pixels ``boxes`` are in

    @property
    def compared(self) -> bool:
        return not self.note


def changed_boxes(before: Image.Image, after: Image.Image) -> list[Box] | None:
    """The boxes (left, top, right, bottom; right and bottom exclusive) of the regions that differ
    between ``before`` and ``after``, in ``before``'s pixels, largest first; None when the images
    differ in size and are not compared."""
    if before.size != after.size:
        return None
    small = _compare_size(before.size)
    red, green, blue = ImageChops.difference(_small(before, small), _small(after, small)).split()
    changed = np.asarray(ImageChops.lighter(ImageChops.lighter(red, green), blue)) > THRESHOLD  # any channel
    if not changed.any():
        return []
    rows, cols = -(-small[1] // CELL), -(-small[0] // CELL)
    padded = np.zeros((rows * CELL, cols * CELL), dtype=bool)
    padded[: small[1], : small[0]] = changed
    cells: np.ndarray = np.asarray(padded.reshape(rows, CELL, cols, CELL).any(axis=(1, 3)))
    regions = _regions(cells)
    if len(regions) > MAX_BOXES:
        regions = [(min(r[0] for r in regions), min(r[1] for r in regions),
                    max(r[2] for r in regions), max(r[3] for r in regions))]
    fx, fy = before.width / small[0], before.height / small[1]
    boxes = []
    for c0, r0, c1, r1 in regions:
        left, top, right, bottom = _tight(padded, (c0 * CELL, r0 * CELL, c1 * CELL, r1 * CELL))
        boxes.append((math.floor(left * fx), math.floor(top * fy), min(before.width, math.ceil(right * fx)),
                      min(before.height, math.ceil(bottom * fy))))
    return sorted(boxes, key=lambda x: (x[2] - x[0]) * (x[3] - x[1]), reverse=True)


def _tight(changed: np.ndarray, box: Box) -> Box:
    """``box`` (compared pixels) shrunk to the changed pixels inside it."""
    left, top, right, bottom = box
    rows, cols = np.nonzero(changed[top:bottom, left:right])
    return (left + int(cols.min()), top + int(rows.min()), left + int(cols.max()) + 1, top + int(rows.max()) + 1)


def _compare_size(size: tuple[int, int]) -> tuple[int, int]:
    factor = min(1.0, COMPARE_SIDE / max(size))
    return max(1, round(size[0] * factor)), max(1, round(size[1] * factor))


def _small(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    return rgb if rgb.size == size else rgb.resize(size, Image.Resampling.BOX)


def _regions(cells: np.ndarray) -> list[Box]:
    """The bounding boxes (column, row, column end, row end) of the 8-connected groups of true cells,
    in the order of each group's first cell. Each row's runs of true cells are joined to the runs of
    the row above that touch them (diagonally too), a union-find over runs rather than cells."""
    edges = np.diff(np.pad(cells, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    rows, cols = np.nonzero(edges)  # row by row: a run's start, then its end (exclusive)
    runs = list(zip(rows[0::2].tolist(), cols[0::2].tolist(), cols[1::2].tolist(), strict=True))
    parent = list(range(len(runs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    above: list[int] = []  # the runs of the row before the current one
    here: list[int] = []
    for i, (row, start, end) in enumerate(runs):
        if i and runs[i - 1][0] != row:
            above, here = (here if runs[i - 1][0] == row - 1 else []), []
        for j in above:
            if runs[j][1] <= end and start <= runs[j][2]:
                parent[root(j)] = root(i)
        here.append(i)
    groups: dict[int, list[int]] = {}
    for i, (row, start, end) in enumerate(runs):
        box = groups.setdefault(root(i), [start, row, end, row + 1])
        box[0], box[1], box[2], box[3] = min(box[0], start), min(box[1], row), max(box[2], end), max(box[3], row + 1)
    return [(b[0], b[1], b[2], b[3]) for b in groups.values()]  # in the order of each group's first run
