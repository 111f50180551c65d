"""Helpers of the public SDK's ``utils`` module: ``create_head_pose`` makes a 4x4 pose (numpy)."""

from ..pose import create_head_pose

__all__ = ["create_head_pose"]
