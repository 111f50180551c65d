"""Make the head compliant (gravity compensation) until Ctrl-C, then make the motors hold again."""

import time

from robot_sdk import Robot

with Robot() as robot:
    robot.enable_gravity_compensation()
    print("compliant: move the head by hand, Ctrl-C to stop", flush=True)
    try:
        while True:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        robot.disable_gravity_compensation()
        print("motors on")
