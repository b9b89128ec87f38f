"""A real ``moto_server`` (S3-compatible, ``moto[server]`` of requirements-dev.txt) on 127.0.0.1 for
the S3 tests, started and stopped by a fixture; buckets are filled with boto3 (installed with moto).

Its request log (stderr) is kept in a file so that tests count the GETs a read sent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from server_http import free_port, stop_process, wait_for_port

FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def moto_server() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "moto_server")
    found = here if os.path.exists(here) else shutil.which("moto_server")
    assert found, "moto_server is not installed: install requirements-dev.txt (moto[server])"
    return found


class Moto:
    def __init__(self, workdir: str) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(workdir, "moto.log")
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [moto_server(), "-H", "127.0.0.1", "-p", str(self.port)], stdout=subprocess.DEVNULL, stderr=self._log
        )
        wait_for_port(self.port, self.proc, "moto_server")

    def settings(self) -> dict[str, str]:
        """The environment that points the project's S3 code at this server."""
        return {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name=FAKE_CREDENTIALS["AWS_REGION"],
        )

    def gets(self) -> list[str]:
        """The GET requests logged so far, as ``PATH STATUS`` (colour codes removed)."""
        with open(self.log_path) as f:
            text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
        return [f"{m[0]} {m[1]}" for m in re.findall(r'"GET (\S+) HTTP/[0-9.]+" (\d+)', text)]

    def stop(self) -> None:
        stop_process(self.proc)
        self._log.close()
