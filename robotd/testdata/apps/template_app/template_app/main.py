import threading
import time

import numpy as np
from pydantic import BaseModel

from robot_sdk import Robot, RobotApp
from robot_sdk.utils import create_head_pose


class TemplateApp(RobotApp):
    # The app's settings page, served on this port (static/ and the routes below).
    custom_app_url: str | None = "http://0.0.0.0:8042"
    # Whether the page takes the media (camera, microphone) from the robot's own pipeline.
    request_media_backend: str | None = None

    def run(self, robot: Robot, stop_event: threading.Event):
        t0 = time.time()
        antennas_enabled = True
        sound_play_requested = False

        class AntennaState(BaseModel):
            enabled: bool

        @self.settings_app.post("/antennas")
        def update_antennas_state(state: AntennaState):
            nonlocal antennas_enabled
            antennas_enabled = state.enabled
            return {"antennas_enabled": antennas_enabled}

        @self.settings_app.post("/play_sound")
        def request_sound_play():
            nonlocal sound_play_requested
            sound_play_requested = True

        while not stop_event.is_set():
            t = time.time() - t0
            yaw_deg = 30.0 * np.sin(2.0 * np.pi * 0.2 * t)
            head_pose = create_head_pose(yaw=yaw_deg, degrees=True)
            if antennas_enabled:
                amp_deg = 25.0
                a = amp_deg * np.sin(2.0 * np.pi * 0.5 * t)
                antennas_deg = np.array([a, -a])
            else:
                antennas_deg = np.array([0.0, 0.0])
            if sound_play_requested:
                sound_play_requested = False
            robot.set_target(head=head_pose, antennas=np.deg2rad(antennas_deg))
            time.sleep(0.02)


if __name__ == "__main__":
    app = TemplateApp()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
