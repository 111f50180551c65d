"""Go to a few head poses with each interpolation technique; end looking 30° to the left."""

from robot_sdk import Robot
from robot_sdk.utils import create_head_pose
from robot_sdk.utils.interpolation import InterpolationTechnique

with Robot() as robot:
    for method in InterpolationTechnique:
        print(f"Testing method: {method.value}", flush=True)
        robot.goto_target(create_head_pose(yaw=-20, degrees=True), antennas=[0.3, -0.3], duration=0.4, method=method)
        robot.goto_target(create_head_pose(), antennas=[0, 0], duration=0.4, method=method)
    robot.goto_target(create_head_pose(yaw=30, degrees=True), duration=0.5)
    print("done")
