"""Notebooks (jupytext percent files in notebooks/) run top to bottom, print their key line and
draw at least one picture (an image/png output)."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.py"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(path)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    text = "".join(
        out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )
    expect = nb.metadata.get("symverify_expect") or "proved"
    assert expect in text, f"{path.name} did not print {expect!r}"
    images = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
              if "image/png" in out.get("data", {})]
    assert images, f"{path.name} produced no image"
