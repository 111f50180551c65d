"""pip, started ahead of an install: imports pip's install command (most of pip's start-up time)
while the daemon gets and builds the package, then runs `python -m pip` with the arguments of the
one JSON line it reads, as that command would. No line (the daemon ended it or died): it exits."""

import json
import runpy
import sys

try:
    import pip._internal.cli.main  # noqa: F401
    import pip._internal.commands.install  # noqa: F401
    import pip._internal.resolution.resolvelib.resolver  # noqa: F401
    from pip._internal.network import session
except Exception:  # another pip's layout: run_module imports what it needs, only later
    session = None
line = sys.stdin.readline()
if not line:
    sys.exit(0)
args = json.loads(line)
if session is not None and "--no-index" in args:
    # pip's user agent asks lsb_release (a Python program) and rustc who the system is, in
    # subprocesses: 0.4-0.5 s of CPU of each pip command here. An install from wheel files with no
    # index sends no request: it never needs one.
    session.user_agent = lambda: "pip"
sys.argv = ["pip"] + args
runpy.run_module("pip", run_name="__main__", alter_sys=True)
