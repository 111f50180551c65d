"""Moves played with ``Robot.play_move``."""

from .move import Move

__all__ = ["Move"]
