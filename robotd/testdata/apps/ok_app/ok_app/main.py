"""An app that runs until the daemon stops it, looking 20° to the left."""

import threading

from robot_sdk import Robot, RobotApp
from robot_sdk.utils import create_head_pose


class OkApp(RobotApp):
    custom_app_url = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        robot.goto_target(create_head_pose(yaw=20, degrees=True), duration=0.3)
        print("ok_app running", flush=True)
        stop_event.wait()
        print("ok_app stopped", flush=True)


if __name__ == "__main__":
    app = OkApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
