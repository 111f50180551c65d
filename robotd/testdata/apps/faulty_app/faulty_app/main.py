"""An app that fails: its run raises."""

import threading

from robot_sdk import Robot, RobotApp


class FaultyApp(RobotApp):
    custom_app_url = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        raise RuntimeError("faulty_app: the sensor it needs is missing")


if __name__ == "__main__":
    app = FaultyApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
