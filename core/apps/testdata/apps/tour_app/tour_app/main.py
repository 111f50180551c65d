"""An app written as apps for the anchor SDK are: numpy for the motion, a pydantic model for the
settings route, a built-in sound. The test rewrites CUSTOM_PORT."""

import threading
import time

import numpy as np
from pydantic import BaseModel

from robot_sdk import Robot, RobotApp
from robot_sdk.utils import create_head_pose


class Wave(BaseModel):
    enabled: bool
    amplitude_deg: float = 25.0


class TourApp(RobotApp):
    custom_app_url: str | None = "http://0.0.0.0:CUSTOM_PORT"
    request_media_backend: str | None = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        wave = Wave(enabled=True)
        chimes = 0

        @self.settings_app.post("/wave")
        def set_wave(update: Wave):
            nonlocal wave
            wave = update
            return wave

        @self.settings_app.get("/wave/{field}")
        def read_wave(field: str, scale: float = 1.0):
            return {"field": field, "value": getattr(wave, field) * scale}

        @self.settings_app.post("/chime")
        def chime():
            nonlocal chimes
            chimes += 1

        robot.goto_target(create_head_pose(), antennas=np.zeros(2), duration=0.3)
        t0 = time.time()
        played = 0
        while not stop_event.is_set():
            t = time.time() - t0
            head = create_head_pose(yaw=20.0 * np.sin(2 * np.pi * 0.3 * t))  # degrees, as the anchor's default
            a = np.deg2rad(wave.amplitude_deg * np.sin(2 * np.pi * 0.5 * t)) if wave.enabled else 0.0
            robot.set_target(head=np.asarray(head), antennas=np.array([a, -a]))
            if chimes > played:
                robot.media.play_sound("wake_up.wav")
                played += 1
            time.sleep(0.02)


if __name__ == "__main__":
    app = TourApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
