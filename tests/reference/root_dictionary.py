"""Build and load a compiled ROOT dictionary for the reference writers (``soa_root.py``,
``streamer_root.py``): rootcling and g++ against the pip ROOT, in a folder the caller owns.

ROOT streams members and bases of a class, and accepts an SoA class, only when the class has a
compiled dictionary; an interpreted declaration is not enough.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any


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
