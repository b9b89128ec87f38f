"""Issue 11, command line and install: `rntuple draw` on a TTree answers in one line, the
README's Python examples run after the documented install, and the release profile is lean.
(The Rust subcommands' messages: ``crates/rntuple-cli/tests/uproot_switch.rs``.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import rntuple
import uproot
from conftest import DATA

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT_DIR, "README.md")
TTREE = os.path.join(DATA, "nanoAOD_2015_CMS_Open_Data_ttbar.root")
NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rntuple", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("target", [TTREE + ":Events", TTREE])
def test_draw_on_a_ttree_is_one_line_naming_what_to_do(tmp_path, target):
    assert uproot.open(TTREE).classnames()["Events;1"] == "TTree"  # what uproot sees there
    proc = _cli("draw", target, "Muon_pt", "-o", str(tmp_path / "m.png"))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "TTree 'Events'" in lines[0] or "is a TTree" in lines[0], lines[0]
    assert f"rntuple convert {TTREE}" in lines[0], lines[0]  # a command that works, with the file's path
    assert "FILE:NAME" not in lines[0]  # not the wrong fix (naming an RNTuple that is not there)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_python_examples_run(tmp_path, monkeypatch):
    blocks = _python_blocks(open(README, encoding="utf-8").read())
    assert len(blocks) >= 3
    shutil.copy(NANO, tmp_path / "nano.root")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)  # noqa: S102 - our README
        except Exception as err:
            pytest.fail(f"README python block {i + 1} fails: {type(err).__name__}: {err}\n{block}")
    out = rntuple.open("out.root")
    assert out["More"].num_entries == 3000  # the first batch given to mkrntuple is written
    assert out["Events"].num_entries == 10
    muons = rntuple.open("muons.root")["Events"].arrays()
    assert muons.run.tolist() == [1, 1, 2] and muons.met.tolist() == [0.0, 0.0, 8.5]
    grown = rntuple.open("grow.root")["Events"].arrays()  # rntuple.update's example
    assert grown.x.tolist() == [0, 1, 2, 3, 4] and grown.y.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]


def test_readme_install_extras_cover_the_examples():
    with open(os.path.join(ROOT_DIR, "crates", "rntuple-python", "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    readme = open(README, encoding="utf-8").read()
    extra = re.search(r'pip install "\./crates/rntuple-python\[(\w+)\]"', readme)
    assert extra is not None
    needed = " ".join(project["optional-dependencies"][extra.group(1)])
    for package in ("pandas", "uproot", "matplotlib"):  # library="pd", convert, draw
        assert package in needed, package
    for prerequisite in ("npm", "RNTUPLE_BIG=0", "4 GiB", "2 cores"):
        assert prerequisite in readme, prerequisite


def test_release_profile_has_no_debug_info_and_profiling_keeps_it():
    with open(os.path.join(ROOT_DIR, "Cargo.toml"), "rb") as fh:
        profiles = tomllib.load(fh)["profile"]
    assert profiles["release"].get("debug", False) in (False, 0, "none")
    assert profiles["profiling"]["inherits"] == "release"
    assert profiles["profiling"]["debug"] not in (False, 0, "none")
