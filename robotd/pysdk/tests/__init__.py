"""Tests of robot_sdk against a real robot-daemon --sim (see daemon.py)."""
