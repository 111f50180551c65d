"""Interpolation names of timed moves (``goto_target(method=...)``)."""

from enum import Enum


class InterpolationTechnique(str, Enum):
    """How a move progresses from its start to its target."""

    LINEAR = "linear"
    MIN_JERK = "minjerk"
    EASE_IN_OUT = "ease_in_out"
    CARTOON = "cartoon"
