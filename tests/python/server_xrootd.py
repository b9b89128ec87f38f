"""A real XRootD server (Debian's ``xrootd-server``, installed by ``.ci/services``) for the tests.

``XrootdServer()`` starts ``xrootd`` on 127.0.0.1 at a free port, serving a fresh world-readable
temporary directory as ``/`` (``oss.localroot``), and stops it on ``stop()`` / leaving the ``with``
block. The daemon refuses to run as root, so as root it runs as ``nobody`` (``-R nobody``), with its
admin and pid paths in the temporary directory.

>>> with XrootdServer() as server:
...     url = server.url(server.put("/path/of/local.root"))  # root://127.0.0.1:PORT//local.root
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

XROOTD = shutil.which("xrootd") or "/usr/bin/xrootd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class XrootdServer:
    def __init__(self, extra_config: str = "") -> None:
        if not os.path.exists(XROOTD):
            raise RuntimeError("the xrootd server is not installed: run .ci/services (Debian xrootd-server)")
        self.dir = tempfile.mkdtemp(prefix="rntuple-xrootd-")
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data)
        os.chmod(self.dir, 0o777)
        os.chmod(self.data, 0o755)
        self.port = free_port()
        self.log = os.path.join(self.dir, "xrootd.log")
        self.proc: subprocess.Popen[bytes] | None = None
        self.extra_config = extra_config  # e.g. "xrootd.trace request": every request in the log

    def start(self) -> XrootdServer:
        cfg = os.path.join(self.dir, "xrootd.cfg")
        with open(cfg, "w") as f:
            f.write(
                f"all.adminpath {self.dir}/admin\nall.pidpath {self.dir}/run\nxrd.port {self.port}\n"
                f"oss.localroot {self.data}\nall.export /\n{self.extra_config}\n"
            )
        os.chmod(cfg, 0o644)
        args = [XROOTD, "-c", cfg, "-l", self.log]
        if os.geteuid() == 0:
            args[1:1] = ["-R", "nobody"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"xrootd did not start on port {self.port}; see {self.log}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def put(self, local: str, name: str | None = None) -> str:
        """Copies ``local`` into the served tree (world-readable); returns its path on the server."""
        name = name or os.path.basename(local)
        dest = os.path.join(self.data, name)
        shutil.copyfile(local, dest)
        os.chmod(dest, 0o644)
        return "/" + name

    def url(self, path: str, port: int | None = None) -> str:
        return f"root://127.0.0.1:{port or self.port}/{path}"

    def __enter__(self) -> XrootdServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
