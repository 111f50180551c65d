"""An app published on the hub: nods until asked to stop."""

import threading

import math

from robot_sdk import Robot, RobotApp


class CatalogApp(RobotApp):
    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        up = True
        while not stop_event.is_set():
            robot.set_target(head={"pitch": math.radians(10 if up else -10)})
            up = not up
            stop_event.wait(0.2)


if __name__ == "__main__":
    app = CatalogApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
