"""A cooperative app that spawns a child process which ignores SIGINT and outlives it."""

import subprocess
import sys
import threading

from robot_sdk import Robot, RobotApp

CHILD = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(1)\n"


class ParentApp(RobotApp):
    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        child = subprocess.Popen([sys.executable, "-c", CHILD])
        print(f"parent_app running, child {child.pid}", flush=True)
        stop_event.wait()
        print("parent_app stopping, leaving its child behind", flush=True)


if __name__ == "__main__":
    app = ParentApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
