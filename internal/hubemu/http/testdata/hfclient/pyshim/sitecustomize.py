"""Lets the client run on Debian bookworm's filelock 3.9, whose FileLock has no `mode` argument
(filelock 3.10 added it; the client asks for filelock>=3.10). Only the file mode of lock files is
lost. TestOfficialClient puts this folder on PYTHONPATH; nothing of the client is changed."""

import inspect

try:
    import filelock
except ImportError:
    filelock = None

if filelock is not None and "mode" not in inspect.signature(filelock.FileLock.__init__).parameters:
    for cls in {filelock.FileLock, filelock.SoftFileLock, filelock.UnixFileLock}:
        original = cls.__init__

        def __init__(self, *args, _original=original, **kwargs):
            kwargs.pop("mode", None)
            _original(self, *args, **kwargs)

        cls.__init__ = __init__
