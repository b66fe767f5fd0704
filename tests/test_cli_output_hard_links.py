"""``prove --json/--junit/--golden`` refuse an output that is a hard link to a file inside a
``--dir`` tree (the same device and inode under a name outside it), or the file a symbolic link
inside the tree points to: the tree rule compared the output's path after links only, so a hard
link passed (the run left the tree's file as it was and the link broken) and so did a link from
the tree to the output (the run replaced what a script there reads through it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from symverify.cli import main

TINY = '''from symverify.scripts.protocol import Instance, ProofResult, script_main


def run(quick=False):
    return ProofResult("tiny", "one computed claim", [Instance.computed("one", True, "a comparison", "exact")])


if __name__ == "__main__":
    raise SystemExit(script_main(run))
'''


def _tree(tmp_path: Path) -> Path:
    d = tmp_path / "tree"
    (d / "sub").mkdir(parents=True)
    (d / "tiny.py").write_text(TINY, encoding="utf-8")
    (d / "sub" / "data.txt").write_text("DATA\n", encoding="utf-8")
    (d / "sub" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    return d


@pytest.mark.parametrize("inside", ["sub/data.txt", "sub/helper.py"])
@pytest.mark.parametrize("flag", ["--json", "--junit", "--golden"])
def test_a_hard_link_into_a_dir_tree_is_refused_naming_both(tmp_path, capsys, flag, inside):
    d = _tree(tmp_path)
    out = tmp_path / "out.file"
    os.link(d / inside, out)
    extra = ["--update-golden"] if flag == "--golden" else []
    assert main(["prove", "--dir", str(d), "tiny", flag, str(out), *extra]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert f"{flag} {out} is a hard link to the file {d / inside} inside --dir {d} (the same device and inode)" in err
    assert "expected a path outside that tree, a new file, or a run file written there before" in err
    assert (d / inside).read_bytes() == out.read_bytes() and os.stat(out).st_ino == os.stat(d / inside).st_ino


def test_a_hard_link_to_a_run_kept_in_the_tree_is_written(tmp_path, capsys):
    """As a run file kept in the tree by its path: a link to it may be updated."""
    d = _tree(tmp_path)
    kept = d / "sub" / "run.json"
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(tmp_path / "first.json")]) == 0
    kept.write_bytes((tmp_path / "first.json").read_bytes())
    out = tmp_path / "out.json"
    os.link(kept, out)
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0, capsys.readouterr().err


def test_a_hard_link_outside_every_tree_is_written(tmp_path, capsys):
    d = _tree(tmp_path)
    other = tmp_path / "elsewhere.txt"
    other.write_text("not a run\n", encoding="utf-8")
    out = tmp_path / "out.json"
    os.link(other, out)
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0, capsys.readouterr().err
    assert '"format": "symverify.proof-run"' in out.read_text(encoding="utf-8")
    assert other.read_text(encoding="utf-8") == "not a run\n"  # the run replaced the path, not the file


@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_the_file_a_symbolic_link_in_a_dir_tree_points_to_is_refused(tmp_path, capsys, flag):
    d = _tree(tmp_path)
    data = tmp_path / "data.txt"
    data.write_text("MYDATA\n", encoding="utf-8")
    (d / "sub" / "linked.txt").symlink_to(data)
    assert main(["prove", "--dir", str(d), "tiny", flag, str(data)]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert f"{flag} {data} is the file the symbolic link {d / 'sub' / 'linked.txt'} inside --dir {d} points to" in err
    assert data.read_text(encoding="utf-8") == "MYDATA\n"


def test_a_dangling_link_and_a_link_to_another_file_in_the_tree_are_no_match(tmp_path, capsys):
    d = _tree(tmp_path)
    (d / "sub" / "gone.txt").symlink_to(tmp_path / "nowhere")
    other = tmp_path / "other.txt"
    other.write_text("x\n", encoding="utf-8")
    (d / "sub" / "other.txt").symlink_to(other)
    out = tmp_path / "out.json"
    out.write_text("old\n", encoding="utf-8")
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0, capsys.readouterr().err
    assert other.read_text(encoding="utf-8") == "x\n"


# ---- an output with another hard link (``ln run.json latest.json``) was replaced by a new file without a
# word: the other name silently kept the previous run. The replacement stays (whole or not at all); a
# warning names the path and how many other names keep the old content -------------------------------------
@pytest.mark.parametrize("others", [1, 2])
def test_an_output_with_other_hard_links_is_replaced_with_a_warning(tmp_path, capsys, others):
    d = _tree(tmp_path)
    out = tmp_path / "run.json"
    out.write_text("old run\n", encoding="utf-8")
    names = [tmp_path / f"latest{k}.json" for k in range(others)]
    for name in names:
        os.link(out, name)
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    keep = "its other hard link keeps" if others == 1 else f"its {others} other hard links keep"
    assert f"symverify: warning: --json {out}: written whole as a new file; {keep} the previous content" in err
    assert '"format": "symverify.proof-run"' in out.read_text(encoding="utf-8")
    assert all(name.read_text(encoding="utf-8") == "old run\n" for name in names)


def test_compile_warns_of_a_hard_linked_output_and_says_nothing_of_a_plain_one(tmp_path, capsys):
    import symverify as sv

    circuit = tmp_path / "c.json"
    sv.dump_file(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2), str(circuit))
    model, cert = tmp_path / "m.json", tmp_path / "cert.json"
    model.write_text("{}\n", encoding="utf-8")
    os.link(model, tmp_path / "m-link.json")
    assert main(["compile", str(circuit), "-o", str(model), "--certificate", str(cert)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and f"-o {model}: written whole as a new file" in err, err
    assert main(["compile", str(circuit), "-o", str(model), "--certificate", str(cert)]) == 0
    assert "warning" not in capsys.readouterr().err  # the link is gone: nothing to say
    assert (tmp_path / "m-link.json").read_text(encoding="utf-8") == "{}\n"


# ---- an existing output made prove look at every file of every --dir tree (a stat each), also for a run file
# written there before and for a file with no other hard link: `--dir /` read the whole file system -----------
def _big_tree(tmp_path: Path, files: int = 30) -> Path:
    d = _tree(tmp_path)
    for k in range(files):
        (d / "sub" / f"f{k}.txt").write_text("x\n", encoding="utf-8")
    return d


def test_a_run_file_written_before_is_replaced_without_searching_the_trees(tmp_path, capsys, monkeypatch):
    from symverify import cli

    d = _big_tree(tmp_path)
    out = tmp_path / "run.json"
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0
    monkeypatch.setattr(cli, "_linked_into", lambda *a: pytest.fail("searched the trees for an output holding a run"))
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0, capsys.readouterr().err


def test_a_file_of_one_link_is_searched_for_symbolic_links_only(tmp_path, capsys, monkeypatch):
    """No ``stat`` of a plain file of the trees: its link count says the output has no other hard link."""
    d = _big_tree(tmp_path)
    out = tmp_path / "notes.txt"
    out.write_text("mine\n", encoding="utf-8")
    looked: list[str] = []
    real_stat = os.stat

    def counted(p, *a, **kw):
        if str(p).startswith(str(d)):
            looked.append(str(p))
        return real_stat(p, *a, **kw)

    monkeypatch.setattr(os, "stat", counted)
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 0, capsys.readouterr().err
    assert [p for p in looked if "/sub/f" in p] == []


def test_trees_past_the_limit_refuse_an_output_that_needs_the_search(tmp_path, capsys, monkeypatch):
    from symverify import cli

    d = _big_tree(tmp_path)
    monkeypatch.setattr(cli, "LINK_SCAN_LIMIT", 10)
    out = tmp_path / "notes.txt"
    out.write_text("mine\n", encoding="utf-8")
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(out)]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert (f"--json {out}: an existing file that is no run written before, and the trees of this run hold more than 10 "
            "names, too many to look for a link to it") in err, err
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert main(["prove", "--dir", str(d), "tiny", "--json", str(tmp_path / "new.json")]) == 0  # a new file: no search
