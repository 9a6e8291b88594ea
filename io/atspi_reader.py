"""One desktop's long-lived accessibility (AT-SPI) reader: answers state reads, one JSON line each.

Started by io/atspi.ts (AtspiReader) with the desktop's environment (AT_SPI_BUS_ADDRESS says which
bus) and ATSPI_NO_CACHE=1, run with the system python (/usr/bin/python3, which has
python3-pyatspi). Starting python and importing pyatspi cost more CPU than most reads, once per
read when each read was a process of its own.

A request, one line on stdin: {"id": N, "module": "<path of an app's reader>", "pid": PID,
"args": [...], "timeoutMs": T}. The module (e.g. apps/kalgebra/local/kalgebra_state.py) is
imported once and its read(pid, args) called. The answer, one line on stdout: {"id": N, "ok":
<what read returned>} or {"id": N, "error": "<what went wrong>"}.

Never an answer from a stale cache: ATSPI_NO_CACHE makes libatspi ask the app for every property
(as a fresh process does, whose cache is empty), and before each read the D-Bus messages that
arrived since the last one are dispatched (apps that left the bus are dropped, so the reader's
memory does not grow with every app a desktop restarts).
"""

import importlib.util
import json
import os
import sys

import pyatspi  # noqa: F401  (initializes libatspi on the bus)
from gi.repository import Atspi, GLib


def pump():
    """Dispatches every D-Bus message and GLib event pending, without waiting for more."""
    context = GLib.MainContext.default()
    while context.pending():
        context.iteration(False)


_modules = {}


def reader(path):
    """The app's reader module at `path`, imported on first use."""
    module = _modules.get(path)
    if module is None:
        name = "coda_reader_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"module: {path} is not a python file")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not callable(getattr(module, "read", None)):
            raise ValueError(f"module: {path} has no read(pid, args)")
        _modules[path] = module
    return module


def answer(request):
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    module, pid, args, timeout = (request.get(k) for k in ("module", "pid", "args", "timeoutMs"))
    if not isinstance(module, str) or not os.path.isabs(module):
        raise ValueError(f"module: expected an absolute path, got {module!r}")
    if not isinstance(pid, int) or pid <= 0:
        raise ValueError(f"pid: expected a positive integer, got {pid!r}")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"args: expected a list of strings, got {args!r}")
    if not isinstance(timeout, int) or timeout <= 0:
        raise ValueError(f"timeoutMs: expected a positive integer, got {timeout!r}")
    # Each D-Bus call may take the read's whole time, as in a fresh process (whose calls to an app
    # it has just met wait up to 15 s): a busy app answers late, not with an error.
    Atspi.set_timeout(timeout, -1)
    pump()
    return reader(module).read(pid, args)


def serve(requests, out):
    for line in requests:
        if not line.strip():
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id") if isinstance(request, dict) else None
            reply = {"id": request_id, "ok": answer(request)}
        except Exception as err:  # noqa: BLE001  (every failure of a read is an answer; the reader lives on)
            reply = {"id": request_id, "error": f"{type(err).__name__}: {err}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main():
    # Answers go to the real stdout; anything else printed (a module's print, libatspi's warnings)
    # goes to stderr, so that it cannot break the line protocol.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(iter(sys.stdin.readline, ""), out)


if __name__ == "__main__":
    main()
