"""A sequence of 4x4 poses built with numpy and scipy, set at 100 Hz for two seconds."""

import time

import numpy as np
from scipy.spatial.transform import Rotation as R

from robot_sdk import Robot

with Robot() as robot:
    t0 = time.monotonic()
    pose = np.eye(4)
    while (t := time.monotonic() - t0) < 2.0:
        pose = np.eye(4)
        pose[:3, :3] = R.from_euler("xyz", [10 * min(t / 1.5, 1.0), 0, 15 * np.sin(2 * np.pi * t)], degrees=True).as_matrix()
        pose[2, 3] = 0.005 * np.sin(2 * np.pi * t)
        robot.set_target(head=pose)
        time.sleep(0.01)
    final = np.eye(4)
    final[:3, :3] = R.from_euler("xyz", [0, 10, 0], degrees=True).as_matrix()
    robot.set_target(head=final)
    got = robot.get_current_head_pose()
    assert got.shape == (4, 4) and got.dtype == np.float64
    print("done")
