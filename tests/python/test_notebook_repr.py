"""Issue 27: the notebook views (``_repr_html_``) of a file, an RNTuple and a field, rendered in
headless Chromium for ATLAS PHYSLITE (``EventData``: 2,401 fields under 854 top-level ones), with
a screenshot kept under ``$RNTUPLE_ARTIFACTS/notebook``; and the concise ``__repr__``."""

from __future__ import annotations

import os

import pytest
import rntuple
from test_browse import driver  # noqa: F401 - the headless Chromium fixture of the browse tests

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
PHYSLITE = os.path.join(DATA, "uproot-physlite-rntuple_v1-0-0-0.root")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> str:
    base = os.environ.get("RNTUPLE_ARTIFACTS")
    out = os.path.join(base, "notebook") if base else str(tmp_path_factory.mktemp("notebook-artifacts"))
    os.makedirs(out, exist_ok=True)
    return out


def _count_fields(fields: list) -> int:
    return sum(1 + _count_fields(f.children) for f in fields)


def test_views_read_no_page_and_sizes_are_inspects():
    f = rntuple.open(PHYSLITE)
    nt = f["EventData"]
    page = nt._repr_html_()
    stats = nt.io_stats()
    assert stats["pages"] == 0 and stats["bytes_read"] == 0  # metadata only
    assert page.count("<details>") == sum(1 for _ in _with_children(nt.fields))
    assert "854 top-level fields, 2,401 fields in all" in page
    # the top-level fields' sizes are those `rntuple inspect` reports (its field table)
    from rntuple._html import _bytes

    report = rntuple.inspect(PHYSLITE, "EventData")["rntuples"][0]
    for field in report["fields"][:20]:
        assert f'title="{field["name"]}">{field["name"]}</span>' in page
        assert _bytes(field["compressed"]) in page
    assert "<table>" in f._repr_html_() and "EventData" in f._repr_html_()
    sub = nt["AnalysisElectronsAuxDyn:pt"]
    assert "AnalysisElectronsAuxDyn:pt" in sub._repr_html_()


def _with_children(fields):
    for f in fields:
        if f.children:
            yield f
            yield from _with_children(f.children)


def test_concise_reprs():
    nt = rntuple.open(PHYSLITE)["EventData"]
    assert repr(nt) == f"<RNTuple 'EventData' (100 entries, 854 top-level fields) in {PHYSLITE!r}>"
    field = nt["AnalysisElectronsAuxDyn:pt"]
    assert repr(field) == "<Field 'AnalysisElectronsAuxDyn:pt' std::vector<float> (collection, 1 subfield)>"


def test_the_view_renders_in_chromium(driver, artifacts, tmp_path):  # noqa: F811 - the fixture
    f = rntuple.open(PHYSLITE)
    nt = f["EventData"]
    page = tmp_path / "notebook.html"
    body = nt._repr_html_() + "<hr>" + f._repr_html_()
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>")
    driver.set_window_size(1200, 1000)
    driver.get(page.as_uri())
    rows = "return document.querySelectorAll('.rntuple-repr .rn-row:not(.rn-cols)')"
    assert driver.execute_script(rows + ".length") == _count_fields(nt.fields) == 2401
    visible = rows.replace("return ", "return Array.from(") + ").filter(e => e.checkVisibility()).length"
    assert driver.execute_script(visible) == 854  # subfields start collapsed
    shot = os.path.join(artifacts, "physlite-eventdata.png")
    driver.save_screenshot(shot)
    assert os.path.getsize(shot) > 10_000
    # open the first field with subfields: its children show, with their types
    driver.execute_script("document.querySelector('.rntuple-repr details > summary').click()")
    assert driver.execute_script(visible) > 854
    types = driver.execute_script(
        "return Array.from(document.querySelectorAll('.rntuple-repr .rn-type'))"
        ".filter(e => e.checkVisibility()).map(e => e.textContent)"
    )
    assert "std::uint64_t" in types
    # every shown row fits the page: no horizontal scrolling at 1,200 px
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    driver.save_screenshot(os.path.join(artifacts, "physlite-eventdata-open.png"))
