"""Native code that can crash or hang (CoACD) in a time-limited child process (``REPLAY_ISOLATE=0``: in process)."""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from replay.errors import DataError

_ROOT = Path(__file__).resolve().parent.parent


def signal_name(returncode: int) -> str:
    """``-11`` -> ``"SIGSEGV"``; a positive exit status -> ``"exit status N"``."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    if returncode > 128 and returncode - 128 in {s.value for s in signal.Signals}:
        return signal.Signals(returncode - 128).name  # a shell reports 128 + N
    return f"exit status {returncode}"


def call_isolated(
    func, *args, timeout_s: float, what: str, path: str | Path | None, field: str | None, advice: str = "", **kwargs
):
    """``func(*args, **kwargs)`` (module-level) in a fresh child process; ``what``, ``path``, ``field``, ``advice`` go
    into the message. Raises DataError: it crashed (signal named), ran past ``timeout_s`` (s), or raised."""
    if os.environ.get("REPLAY_ISOLATE", "1") == "0":
        return func(*args, **kwargs)
    tail = f"; {advice}" if advice else ""
    with tempfile.TemporaryDirectory(prefix="replay-isolate-") as tmp:
        inp, out = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        inp.write_bytes(pickle.dumps((func.__module__, func.__qualname__, args, kwargs)))
        env = dict(os.environ)
        # the child imports what this process can: its sys.path (as multiprocessing's spawn passes it)
        env["PYTHONPATH"] = os.pathsep.join([str(_ROOT), *[p for p in sys.path if p]])
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "replay.data.isolate", str(inp), str(out)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            raise DataError(
                path,
                field,
                f"{what} did not finish within {timeout_s:.0f} s and was stopped{tail}",
                cause="native_crash",
            ) from None
        if proc.returncode != 0 or not out.is_file():
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            last = f" ({err[-1][:200]})" if err and proc.returncode > 0 else ""
            raise DataError(
                path, field, f"{what} crashed ({signal_name(proc.returncode)}){last}{tail}", cause="native_crash"
            )
        status, value = pickle.loads(out.read_bytes())
    if status == "ok":
        return value
    raise DataError(path, field, f"{what} failed: {value}{tail}", cause="native_crash")


def _child(inp: str, out: str) -> int:
    module, qualname, args, kwargs = pickle.loads(Path(inp).read_bytes())
    func = importlib.import_module(module)
    for part in qualname.split("."):
        func = getattr(func, part)
    try:
        result = ("ok", func(*args, **kwargs))
    except Exception as exc:  # reported to the parent as one line
        result = ("error", f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    tmp = Path(out).with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(result))
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2]))
