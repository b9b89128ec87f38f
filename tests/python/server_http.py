"""A real nginx on 127.0.0.1 for the HTTP tests, started and stopped by a fixture.

nginx comes from ``.ci/services`` (Debian ``nginx-light``). It runs as one process
(``daemon off; master_process off``) with its config, logs and document root in a temporary
directory; its access log records every request as ``METHOD URI "RANGE" STATUS`` so that tests
count the requests a read really sent.

Locations: ``/private/`` answers 403 unless ``Authorization: Bearer <token>``;
``/nomulti/`` serves one range per request (``max_ranges 1``: several ranges get the whole file).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

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


class Nginx:
    """nginx serving ``files`` (copied into ``/``, ``/private/`` and ``/nomulti/``)."""

    def __init__(self, workdir: str, files: list[str], token: str) -> None:
        nginx = next((p for p in NGINX_CANDIDATES if os.path.exists(p)), None)
        assert nginx, "nginx is not installed: run .ci/services (Debian nginx-light) for the HTTP tests"
        self.dir = workdir
        www = os.path.join(workdir, "www")
        for sub in ("", "private", "nomulti"):
            os.makedirs(os.path.join(www, sub), exist_ok=True)
            for f in files:
                shutil.copy(f, os.path.join(www, sub, os.path.basename(f)))
        os.makedirs(os.path.join(workdir, "tmp"), exist_ok=True)
        self.port = free_port()
        d = workdir
        conf = f"""daemon off; master_process off; user root; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
  log_format ranges '$request_method $uri "$http_range" $status';
  access_log {d}/access.log ranges;
  client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp;
  uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;
  server {{
    listen 127.0.0.1:{self.port};
    root {www};
    location /private/ {{ if ($http_authorization != "Bearer {token}") {{ return 403; }} }}
    location /nomulti/ {{ max_ranges 1; }}
  }}
}}
"""
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
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")


def write_multicluster_events(path: str, clusters: int = 4) -> None:
    """The bundled CMS muon ``Events`` (1000 entries, written by ROOT) rewritten as ``clusters``
    clusters of small pages, so that a read needs many ranges from several clusters."""
    import rntuple

    events = rntuple.open(MUONS)["Events"].arrays()
    step = len(events) // clusters
    with rntuple.recreate(path, initial_unzipped_page_size=64, max_unzipped_page_size=1024) as f:
        w = f.mkrntuple("Events", events[:step])
        for i in range(clusters):
            w.extend(events[i * step : (i + 1) * step if i < clusters - 1 else len(events)])
            w.commit_cluster()
