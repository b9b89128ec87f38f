"""The benchmark's heap counter (``bench/heapcount.c``, an LD_PRELOAD allocation counter): a C
program allocating sizes known by construction, through every wrapped function and from several
threads, must be reported exactly; a real writer under it reports its allocations."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))

import heapcount  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="needs a C compiler")

# Phase 1 (first to second mark): the sizes below, one thread; live at the second mark: the 3000-byte
# block. Phase 2: four threads (glibc's own thread set-up allocates too, so only the 40000-byte
# class is exact there).
PROGRAM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *worker(void *arg)
{
   (void)arg;
   for (int i = 0; i < 1000; ++i) {
      char *p = malloc(40000);
      p[0] = 1;
      free(p);
   }
   return NULL;
}

int main(int argc, char **argv)
{
   void (*mark)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "heapcount_mark");
   if (!mark)
      return 2;
   mark();
   char *a = malloc(1000);                 /* 1000 */
   char *b = calloc(10, 300);              /* 3000, zeroed */
   for (int i = 0; i < 3000; ++i)
      if (b[i])
         return 3;
   void *c = NULL;
   if (posix_memalign(&c, 4096, 5000) || ((uintptr_t)c & 4095))
      return 4;
   void *d = aligned_alloc(64, 640);
   void *e = memalign(256, 100);
   if (((uintptr_t)d & 63) || ((uintptr_t)e & 255) || malloc_usable_size(e) != 100)
      return 5;
   memset(a, 7, 1000);
   a = realloc(a, 3000);                   /* +3000 requested; live 3000 instead of 1000 */
   for (int i = 0; i < 1000; ++i)
      if (a[i] != 7)
         return 6;
   /* live now: 3000 + 3000 + 5000 + 640 + 100 = 11740, the peak of the phase */
   free(b);
   free(c);
   free(d);
   free(e);
   if (argc > 1)
      raise(SIGUSR1); /* the second mark by signal */
   else
      mark();
   /* phase 2: 4 threads allocate and free 1000 blocks of 40000 bytes each */
   pthread_t t[4];
   for (int i = 0; i < 4; ++i)
      pthread_create(&t[i], NULL, worker, NULL);
   for (int i = 0; i < 4; ++i)
      pthread_join(t[i], NULL);
   mark();
   free(a);
   return 0;
}
"""


@pytest.fixture(scope="module")
def counter(tmp_path_factory):
    d = tmp_path_factory.mktemp("heapcount")
    lib = heapcount.build(str(d))
    src = d / "alloc.c"
    src.write_text(PROGRAM)
    exe = d / "alloc"
    subprocess.run(
        [os.environ.get("CC", "cc"), "-O0", "-fno-builtin", "-pthread", str(src), "-o", str(exe), "-ldl"], check=True
    )
    return lib, str(exe)


@pytest.mark.parametrize("by_signal", [False, True])
def test_counter_reports_known_allocations_exactly(counter, tmp_path, by_signal):
    lib, exe = counter
    out = str(tmp_path / "heap.jsonl")
    cmd = [exe, "signal"] if by_signal else [exe]
    proc = subprocess.run(cmd, env=heapcount.environment(lib, out))
    assert proc.returncode == 0
    rows = heapcount.lines(out)
    assert [r["event"] for r in rows] == ["mark", "mark", "mark", "exit"]
    start, end, threaded, last = rows
    requested = 1000 + 3000 + 5000 + 640 + 100 + 3000
    assert start["live"] == 0 and start["total_bytes"] == 0
    assert end["total_bytes"] == requested
    assert end["calls"] == 6
    assert end["frees"] == 4
    assert end["live"] == 3000
    assert end["peak"] == 11740
    # per power of two of the request size: [log2, calls, bytes]
    assert end["hist"] == [[6, 1, 100], [9, 2, 1640], [11, 2, 6000], [12, 1, 5000]]
    # the figures of the section, as the harness reads them
    figures = heapcount.figures(out)
    assert figures == {
        "heap_peak": 11740,
        "heap_above_input": 11740,
        "heap_requested": requested,
        "heap_calls": 6,
        "heap_hist": end["hist"],
    }
    # phase 2: every thread's blocks counted (atomics), at most 4 live at once
    assert [15, 4000, 4000 * 40000] in threaded["hist"]
    assert threaded["frees"] - end["frees"] >= 4000
    assert 3000 + 40000 <= threaded["peak"] <= 3000 + 4 * 40000 + 65536
    # after the last mark: the last free; the peak restarted from the live bytes at the mark
    assert last["live"] == threaded["live"] - 3000 and last["frees"] == threaded["frees"] + 1
    assert last["peak"] == threaded["live"]


def test_counter_leaves_a_process_without_output_path_alone(counter, tmp_path):
    lib, exe = counter
    env = heapcount.environment(lib, "")
    assert subprocess.run([exe], env=env).returncode == 0
    assert not list(tmp_path.iterdir())


def test_counter_sees_python_and_numpy_allocations(counter, tmp_path):
    """numpy's data buffers come from malloc/calloc: a 8 MB array shows up in the figures of its phase."""
    lib, _ = counter
    out = str(tmp_path / "heap.jsonl")
    code = (
        "import ctypes, numpy as np\nmark = ctypes.CDLL(None).heapcount_mark\nmark()\na = np.ones(1_000_000)\nmark()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=heapcount.environment(lib, out))
    assert proc.returncode == 0
    figures = heapcount.figures(out, None)
    assert 8_000_000 <= figures["heap_above_input"] < 9_000_000
    assert figures["heap_requested"] >= 8_000_000
