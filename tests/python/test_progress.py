"""Progress of long operations (``rntuple._term``): a terminal bar on standard error, a bar that
updates in place in a notebook, off when the output is not interactive, ``progress=False`` and
``RNTUPLE_PROGRESS=0`` turn it off."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import awkward as ak
import dask
import dask_awkward as dak
import numpy as np
import pytest
import rntuple
from rntuple import _term


class _FakeKernel:
    kernel = object()


@pytest.fixture
def notebook(monkeypatch):  # type: ignore[no-untyped-def]
    """This process looks like a Jupyter kernel (IPython's shell with a kernel)."""
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: _FakeKernel()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.delenv(_term.ENV, raising=False)


@pytest.fixture
def files(tmp_path):  # type: ignore[no-untyped-def]
    out = []
    for i in range(3):
        p = str(tmp_path / f"f{i}.root")
        with rntuple.recreate(p) as f:
            f["Events"] = {"x": np.arange(100, dtype=np.int64) + 100 * i}
        out.append(p)
    return out


def test_not_interactive_means_off(monkeypatch, capsys, files):  # type: ignore[no-untyped-def]
    monkeypatch.delenv(_term.ENV, raising=False)
    assert not _term.in_notebook()
    bar = _term.Progress(10, "x")
    assert bar.where == "off"  # pytest's stderr is not a terminal
    assert list(rntuple.iterate(files, step_size=50))
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""


def test_notebook_bar_updates_in_place(notebook, capsys, files, monkeypatch):  # type: ignore[no-untyped-def]
    # without tqdm: a text line rewritten with carriage returns on stdout (the cell's output)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    batches = list(rntuple.iterate(files, step_size=50))
    assert sum(len(b) for b in batches) == 300
    out = capsys.readouterr().out
    assert out.count("\r") >= 2 and out.endswith("\n")
    assert "iterate: 100% 3/3 files" in out.splitlines()[-1].split("\r")[-1]


def test_notebook_bar_uses_tqdm_when_installed(notebook, capsys, files):  # type: ignore[no-untyped-def]
    tqdm = pytest.importorskip("tqdm")
    bar = _term.Progress(3, "iterate", None, "files")
    assert bar.where == "notebook"
    assert isinstance(bar._notebook, tqdm.tqdm)
    bar.update(3)
    bar.close()
    assert "3/3" in capsys.readouterr().err  # tqdm.auto without widgets: text on stderr, in place


def test_progress_false_and_the_environment_turn_it_off(notebook, capsys, files, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    list(rntuple.iterate(files, step_size=50, progress=False))
    assert capsys.readouterr().out == ""
    monkeypatch.setenv(_term.ENV, "0")
    list(rntuple.iterate(files, step_size=50))
    out = tmp = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert _term.Progress(5, "x").where == "off"
    monkeypatch.setenv(_term.ENV, "1")
    assert _term.Progress(5, "x").where == "notebook"
    del tmp


def test_convert_shows_progress_in_a_notebook(notebook, capsys, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    src = str(tmp_path / "src.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": np.arange(1000, dtype=np.int64)}), src)
    rntuple.convert(src, str(tmp_path / "out.root"))
    line = capsys.readouterr().out.split("\r")[-1]
    assert "1,000/1,000 entries" in line


def test_dask_write_shows_the_tasks_done(notebook, capsys, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    array = dak.from_awkward(ak.Array({"x": np.arange(40)}), npartitions=4)
    with dask.config.set(scheduler="sync"):
        rntuple.dask_write(array, str(tmp_path / "parts"))
    line = capsys.readouterr().out.split("\r")[-1]
    assert line.startswith("dask_write: 100%") and "tasks" in line
    with dask.config.set(scheduler="sync"):
        rntuple.dask_write(array, str(tmp_path / "parts2"), progress=False)
    assert capsys.readouterr().out == ""


def test_the_terminal_bar_when_asked(tmp_path):  # type: ignore[no-untyped-def]
    # progress=True outside a notebook: the command's bar on standard error (forced, not a tty here)
    code = "import rntuple._term as t\nb = t.Progress(4, 'work', True, 'cells')\nb.update(4)\nb.close()\n"
    env = {k: v for k, v in os.environ.items() if k != _term.ENV}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "work" in proc.stderr and "4/4" in proc.stderr.replace(" ", "")
    assert proc.stdout == ""


def test_merge_reports_to_the_notebook(notebook, capsys, files, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    # merge runs in the Rust core: its progress reaches the notebook's bar through a Python object
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    rntuple.merge(str(tmp_path / "merged.root"), files)
    out = capsys.readouterr().out
    lines = [chunk.split("\r")[-1] for chunk in out.split("\n") if chunk]
    assert lines and all("100%" in line for line in lines), out
    rntuple.merge(str(tmp_path / "quiet.root"), files, progress=False)
    assert capsys.readouterr().out == ""
