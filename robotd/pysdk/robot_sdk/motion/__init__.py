"""Moves played with ``Robot.play_move``: your own (``Move``), gotos (``goto.GotoMove``) and
recorded moves from a library on the hub (``recorded_move.RecordedMoves``)."""

from .move import Move

__all__ = ["Move"]
