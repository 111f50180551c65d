"""__TITLE__: a robot app. The robot daemon runs it as ``python -u -m __APP_NAME__.main``."""

import math
import threading
import time

from robot_sdk import HTTPError, Robot, RobotApp, create_head_pose


class __CLASS_NAME__(RobotApp):
    # The app's web page: static/ and the routes defined on settings_app. None: no web page.
    custom_app_url = "http://0.0.0.0:__WEB_PORT__"

    def __init__(self) -> None:
        super().__init__()
        self.waving = True
        self.amplitude_deg = 30.0  # how far the antennas swing each way

        @self.settings_app.get("/api/settings")
        def get_settings():
            return {"waving": self.waving, "amplitude_deg": self.amplitude_deg}

        # Routes take what FastAPI routes take: here the JSON body as a dict (a pydantic model
        # works too when the app depends on pydantic), path and query parameters.
        @self.settings_app.post("/api/settings")
        def set_settings(body: dict):
            waving = body.get("waving", self.waving)
            amplitude = body.get("amplitude_deg", self.amplitude_deg)
            if not isinstance(waving, bool):
                raise HTTPError(422, "waving: true or false")
            if isinstance(amplitude, bool) or not isinstance(amplitude, (int, float)) or not 0 <= amplitude <= 90:
                raise HTTPError(422, "amplitude_deg: a number of degrees from 0 to 90")
            self.waving, self.amplitude_deg = waving, float(amplitude)
            return {"status": "ok", "waving": self.waving, "amplitude_deg": self.amplitude_deg}

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        # robot is connected. Poll stop_event: the daemon sets it (with SIGINT) to stop the app.
        t0 = time.monotonic()
        while not stop_event.is_set():
            if self.waving:
                t = time.monotonic() - t0
                swing = math.radians(self.amplitude_deg) * math.sin(2 * math.pi * 0.5 * t)
                robot.set_target(
                    head=create_head_pose(yaw=15 * math.sin(2 * math.pi * 0.2 * t)),  # degrees
                    antennas=[swing, -swing],  # radians
                )
            stop_event.wait(0.02)  # 50 updates a second


if __name__ == "__main__":
    app = __CLASS_NAME__()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
