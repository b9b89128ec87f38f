"""What the reference writers of class fields share (``soa_root.py``, ``streamer_root.py``,
``streamer_nested_root.py``, ``streamer_write_root.py``): ROOT imported in batch mode, a compiled
dictionary built and loaded (rootcling and g++ against the pip ROOT, in a folder the caller
owns), the values of a ``Hit``-like object, and ROOT's readings written as JSON.

ROOT streams members and bases of a class, and accepts an SoA class, only when the class has a
compiled dictionary; an interpreted declaration is not enough.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from typing import Any


def import_root() -> Any:
    """The ROOT module (its import warnings silenced), in batch mode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT  # noqa: N811

    ROOT.gROOT.SetBatch(True)
    return ROOT


def hit(h: Any) -> dict:
    """The members of a ``Hit``/``WHit`` (``x``, ``y``, ``id``, ``samples``, ``label``) as JSON values."""
    return {
        "x": float(h.x),
        "y": float(h.y),
        "id": int(h.id),
        "samples": [float(s) for s in h.samples],
        "label": str(h.label),
    }


def write_entries(path: str, entries: list[dict]) -> None:
    """``{"Events": entries}`` as the JSON files next to the ROOT files in tests/data are."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"Events": entries}, fh, indent=1)
        fh.write("\n")


def load_dictionary(root: Any, sources: str, headers: list[str], folder: str, libs: list[str]) -> str:
    """Copies ``headers`` (the classes, then the LinkDef) from ``sources`` into ``folder``, builds
    ``libdict.so`` there linked with ROOT's ``libs`` (``["Core", "RIO"]``), loads it into ``root``
    (the imported ROOT module) and adds ``folder`` to the interpreter's include path."""
    rootsys = os.path.dirname(root.__file__)
    libdir = os.path.join(rootsys, "lib")
    for name in headers:
        shutil.copy(os.path.join(sources, name), folder)
    subprocess.run(
        [os.path.join(rootsys, "bin", "rootcling"), "-f", "dict.cxx", "-I.", *headers], cwd=folder, check=True
    )
    lib = os.path.join(folder, "libdict.so")
    compile_cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-fPIC", "-shared", f"-I{rootsys}/include", "-I."]
    link = [f"-L{libdir}", *(f"-l{name}" for name in libs), f"-Wl,-rpath,{libdir}"]
    subprocess.run([*compile_cmd, "dict.cxx", "-o", lib, *link], cwd=folder, check=True)
    root.gInterpreter.AddIncludePath(folder)
    if root.gSystem.Load(lib) < 0:
        raise RuntimeError("cannot load " + lib)
    return lib
