"""An app that crashes as it starts."""

import threading

from robot_sdk import Robot, RobotApp


class CrashApp(RobotApp):
    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        raise RuntimeError("crash_app cannot start: calibration file missing")


if __name__ == "__main__":
    app = CrashApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
