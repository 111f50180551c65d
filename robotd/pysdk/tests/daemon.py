"""A real ``robot-daemon --sim`` for the tests, started once per test run on a free loopback port.

The daemon binary is ``$ROBOT_DAEMON_BIN`` (``make test-python`` builds it into bin/); without it the
tests build one with ``go build``. Its data dir and apps venv live in a temporary directory that is
removed when the tests end.
"""

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Optional

REPO_ROOT = Path(__file__).resolve().parents[3]
SDK_ROOT = Path(__file__).resolve().parents[1]

_daemon: Optional["Daemon"] = None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """A robot-daemon process and its URL."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="robot-sdk-test-")
        binary = os.environ.get("ROBOT_DAEMON_BIN")
        if not binary:
            binary = os.path.join(self.tmp, "robot-daemon")
            subprocess.run(["go", "build", "-o", binary, "./robotd/cmd/robot-daemon"], cwd=REPO_ROOT, check=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.tmp, "daemon.log")
        env = dict(os.environ, ROBOT_DAEMON_URL=self.url)
        env.pop("ROBOT_DAEMON_TOKEN", None)
        self.data_dir = os.path.join(self.tmp, "data")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--sim", "--port", str(self.port), "--data-dir", self.data_dir,
             "--hub-url", "none", "--log-level", "debug",
             # The SDK's dependencies are the system's (Debian's python3-numpy and the others).
             "--python", "/usr/bin/python3", "--system-site-packages"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )
        deadline = time.monotonic() + 180  # the first start creates the apps venv
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"robot-daemon exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"robot-daemon did not answer /healthz:\n{self.log()}")
            time.sleep(0.05)
        # The owner's token, made on the first start: the tests' scripts find it as the owner's do
        # (here through $ROBOT_DAEMON_TOKEN_FILE, the data dir being no default one).
        self.token_file = os.path.join(self.data_dir, "api-token")
        self.socket = os.path.join(self.data_dir, "daemon.sock")
        self.token = Path(self.token_file).read_text().strip()
        os.environ["ROBOT_DAEMON_TOKEN_FILE"] = self.token_file
        os.environ.pop("ROBOT_DAEMON_TOKEN", None)
        # Wait for the wake-up move, so that tests start from an awake robot at rest.
        deadline = time.monotonic() + 10
        while not self.get("/api/state/full")["awake"] and time.monotonic() < deadline:
            time.sleep(0.05)

    def get(self, path: str) -> dict:
        req = urllib.request.Request(self.url + path, headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def post(self, path: str, body: Optional[dict] = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def daemon() -> Daemon:
    """The daemon shared by every test of the run (started on first use, stopped at exit)."""
    global _daemon
    if _daemon is None:
        _daemon = Daemon()
        atexit.register(_daemon.close)
    return _daemon
