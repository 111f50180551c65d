"""An app that ignores SIGINT, and spawns a child process that ignores it too."""

import signal
import subprocess
import sys
import threading
import time

from robot_sdk import Robot, RobotApp

CHILD = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(1)\n"


class StubbornApp(RobotApp):
    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", CHILD])
        print(f"stubborn_app running, child {child.pid}", flush=True)
        while True:  # never looks at stop_event
            time.sleep(0.1)


if __name__ == "__main__":
    app = StubbornApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
