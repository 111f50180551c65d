"""__TITLE__: a robot that talks with an OpenAI-compatible chat API.

The robot daemon runs it as ``python -u -m __APP_NAME__.main``. What it hears is transcribed and
sent to the model with tools that move the head and antennas and play sounds; the answers are
spoken with a head wobble blended over the pose the tools set. Its web page sets the API's
address, model and key (saved in the config file, see config.py) and has a chat box.
"""

import sys
import threading

from robot_sdk import HTTPError, Robot, RobotApp

from .config import ConfigStore
from .conversation import Conversation, Listener, NotConfigured, Voice
from .llm import LLMError
from .motion import MovementManager
from .tools import Toolbox


class __CLASS_NAME__(RobotApp):
    # The app's web page: settings and a chat box (static/ and the routes below).
    custom_app_url = "http://0.0.0.0:__WEB_PORT__"

    def __init__(self) -> None:
        super().__init__()
        self.store = ConfigStore()
        self.conversation = None
        app = self.settings_app

        @app.get("/api/config")
        def get_config():
            return dict(self.store.get().public(), config_path=str(self.store.path))

        @app.post("/api/config")
        def set_config(body: dict):  # the JSON body, as FastAPI gives it (422 when it is not an object)
            try:
                cfg = self.store.update(body)
            except ValueError as e:
                raise HTTPError(422, str(e))
            return dict(cfg.public(), config_path=str(self.store.path))

        @app.get("/api/status")
        def status():
            if self.conversation is None:
                return {"state": "starting"}
            return self.conversation.get_status()

        @app.post("/api/say")
        def say(body: dict):
            text = body.get("text")
            if not isinstance(text, str) or not text.strip():
                raise HTTPError(422, "text: what to say to the robot")
            if self.conversation is None:
                raise HTTPError(503, "the app is starting")
            try:
                return self.conversation.turn(text.strip())
            except NotConfigured as e:
                raise HTTPError(400, str(e))
            except LLMError as e:
                raise HTTPError(502, f"the chat API failed: {e}")

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        motion = MovementManager(robot)
        voice = Voice(robot, motion)
        toolbox = Toolbox(robot, motion, on_sound=voice.played)
        self.conversation = Conversation(self.store, toolbox, voice)
        listener = threading.Thread(target=Listener(robot, self.conversation, voice).run, args=(stop_event,),
                                    name="listener", daemon=True)
        motion.start()
        listener.start()
        print(f"__APP_NAME__ running; settings in {self.store.path}", flush=True)
        try:
            stop_event.wait()
        finally:
            listener.join(timeout=5)
            motion.stop()
            toolbox.close()


if __name__ == "__main__":
    try:
        app = __CLASS_NAME__()
    except ValueError as e:  # a broken config file
        print(f"__APP_NAME__: {e}", file=sys.stderr)
        sys.exit(1)
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
