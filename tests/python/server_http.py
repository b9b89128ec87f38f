"""A real nginx on 127.0.0.1 for the HTTP tests, started and stopped by a fixture.

nginx comes from ``.ci/services`` (Debian ``nginx-light``). It runs as one process
(``daemon off; master_process off``) with its config, logs and document root in a temporary
directory; its access log records every request as ``METHOD URI "RANGE" STATUS`` so that tests
count the requests a read really sent.

Locations: ``/private/`` answers 403 unless ``Authorization: Bearer <token>``;
``/nomulti/`` serves one range per request (``max_ranges 1``: several ranges get the whole file);
``/dav/`` takes WebDAV writes (``PUT``, ``DELETE``, ``MOVE``); ``/readonly/`` refuses them.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode} before listening on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{what} did not listen on port {port} within {timeout} s")


def stop_process(proc: subprocess.Popen) -> None:
    """Stops a server this module started: SIGTERM, then SIGKILL after 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Nginx:
    """nginx serving ``files`` (copied into ``/``, ``/private/`` and ``/nomulti/``)."""

    def __init__(self, workdir: str, files: list[str], token: str) -> None:
        nginx = next((p for p in NGINX_CANDIDATES if os.path.exists(p)), None)
        assert nginx, "nginx is not installed: run .ci/services (Debian nginx-light) for the HTTP tests"
        self.dir = workdir
        www = os.path.join(workdir, "www")
        for sub in ("", "private", "nomulti", "dav", "readonly"):
            os.makedirs(os.path.join(www, sub), exist_ok=True)
            for f in files:
                shutil.copy(f, os.path.join(www, sub, os.path.basename(f)))
        os.makedirs(os.path.join(workdir, "tmp"), exist_ok=True)
        self.port = free_port()
        d = workdir
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nginx.conf.in")) as f:
            template = f.read()
        values = {"@DIR@": d, "@LISTEN@": str(self.port), "@SSL@": "", "@TOKEN@": token}
        conf = re.sub("|".join(values), lambda m: values[m[0]], template)
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(
            [nginx, "-p", d, "-c", f"{d}/nginx.conf", "-e", f"{d}/error.log"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.proc, "nginx")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def log(self) -> list[str]:
        with open(os.path.join(self.dir, "access.log")) as f:
            return f.read().splitlines()

    def stop(self) -> None:
        stop_process(self.proc)


DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")


def write_multicluster_events(path: str, clusters: int = 4) -> None:
    """The bundled CMS muon ``Events`` (1000 entries, written by ROOT) rewritten as ``clusters``
    clusters of small pages, so that a read needs many ranges from several clusters."""
    import rntuple

    events = rntuple.open(MUONS)["Events"].arrays()
    step = len(events) // clusters
    with rntuple.recreate(path, initial_unzipped_page_size=64, max_unzipped_page_size=1024) as f:
        w = f.mkrntuple("Events", rntuple.schema_of(events))  # fields only; the entries follow
        for i in range(clusters):
            w.extend(events[i * step : (i + 1) * step if i < clusters - 1 else len(events)])
            w.commit_cluster()


@pytest.fixture(scope="module", name="events")
def events_file():
    """A multi-cluster ``Events`` file (:func:`write_multicluster_events`) for the module."""
    with tempfile.TemporaryDirectory(prefix="rntuple-remote-") as d:
        path = os.path.join(d, "events.root")
        write_multicluster_events(path)
        yield path


def same(a, b) -> bool:
    """Equal awkward arrays: the same values and the same type."""
    return a.to_list() == b.to_list() and str(a.type) == str(b.type)
