"""``prove --dir X`` where X is no directory says what X is: a FIFO or a device was called "a file",
and the message then suggested passing it as a script's path DIR/NAME.py."""

from __future__ import annotations

import os

import pytest

from symverify.cli import main


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_given_as_dir_is_named_a_special_file(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main(["prove", "--list", "--dir", str(fifo)]) == 3
    err = capsys.readouterr().err
    assert f"proof directory {fifo}: expected a directory of NAME.py scripts, found a special file (a FIFO" in err, err


def test_a_regular_file_given_as_dir_is_still_a_file(tmp_path, capsys):
    plain = tmp_path / "c.json"
    plain.write_text("{}", encoding="utf-8")
    assert main(["prove", "--list", "--dir", str(plain)]) == 3
    assert f"proof directory {plain}: expected a directory of NAME.py scripts, found a file (" in capsys.readouterr().err
