"""A cooperative app: waves its antennas until stop_event is set."""

import math
import threading
import time

from robot_sdk import Robot, RobotApp


class CoopApp(RobotApp):
    custom_app_url = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        print("coop_app running", flush=True)
        t0 = time.monotonic()
        while not stop_event.is_set():
            t = time.monotonic() - t0
            a = 0.5 * math.sin(2 * math.pi * 0.5 * t)
            # A head pose as x, y, z, roll, pitch, yaw (metres, radians): no numpy needed.
            robot.set_target(head={"yaw": math.radians(10)}, antennas=[a, -a])
            stop_event.wait(0.02)
        print("coop_app stopping", flush=True)


if __name__ == "__main__":
    app = CoopApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
