"""An app with a web UI: the SDK serves static/ on custom_app_url."""

import threading

from robot_sdk import Robot, RobotApp


class WebUIApp(RobotApp):
    custom_app_url: str = "http://127.0.0.1:8042"

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        print("webui_app running", flush=True)
        stop_event.wait()


if __name__ == "__main__":
    app = WebUIApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
