"""Helpers of the anchor SDK's ``utils`` module: ``create_head_pose``."""

from ..pose import HeadPose, create_head_pose

__all__ = ["HeadPose", "create_head_pose"]
