"""Nod the head and wave the antennas at 100 Hz until Ctrl-C."""

import math
import time

import numpy as np

from robot_sdk import Robot
from robot_sdk.utils import create_head_pose

with Robot() as robot:
    t0 = time.monotonic()
    try:
        while True:
            t = time.monotonic() - t0
            pitch = 10 * math.sin(2 * math.pi * 0.5 * t)
            robot.set_target(head=create_head_pose(pitch=pitch, degrees=True),
                             antennas=np.deg2rad([30, -30]) * math.sin(2 * math.pi * t))
            time.sleep(0.01)
    except KeyboardInterrupt:
        print("bye")
