"""Inputs the hardened checks must still take, and what they must not cost: library arguments given as
numpy integers, numpy bools or ``IntEnum`` members read by their values (floats, strs and ints for
flags stay refused); ``plot_model`` sizes as numpy numbers; refuted reports kept by the golden check
wherever they sit; a side's parts walked once per object by ``check_plain``; IR objects, compiled
results, reports and ∀-gadgets through pickle."""

from __future__ import annotations

import enum

import numpy as np
import pytest

from symverify.errors import IRError, UsageError
from symverify.library import random_circuit, standard_library, wired_circuit


class _Seed(enum.IntEnum):
    THREE = 3


@pytest.mark.parametrize("seed", [np.int64(3), np.int32(3), _Seed.THREE])
def test_random_circuit_integer_seed_is_its_value(seed: object) -> None:
    assert random_circuit(4, 2, 12, 3, seed=seed) == random_circuit(4, 2, 12, 3, seed=3)
    assert random_circuit(4, 2, 12, 3, seed=seed).name.endswith("seed3")


def test_random_circuit_numpy_num_outputs_and_consts() -> None:
    c = random_circuit(4, 2, 12, 3, num_outputs=np.int64(5), consts=np.bool_(False))
    assert c == random_circuit(4, 2, 12, 3, num_outputs=5, consts=False)
    assert len(c.outputs) == 5


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"seed": np.float64(3.0)}, r"random_circuit: expected an int seed, found float64"),
    ({"seed": np.bool_(True)}, r"random_circuit: expected an int seed, found bool"),
    ({"num_outputs": np.float32(2)}, r"expected an int num_outputs \(or None\), found float32"),
    ({"consts": np.int64(1)}, r"expected consts True or False, found int64 np\.int64\(1\)"),
])
def test_random_circuit_refuses_non_integers(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(IRError, match=match):
        random_circuit(4, 2, 12, 3, **kwargs)  # type: ignore[arg-type]


def test_wired_circuit_numpy_seed_and_flag() -> None:
    got = wired_circuit(8, 3, "random", seed=np.int64(5), shuffle_outputs=np.bool_(True))
    assert got == wired_circuit(8, 3, "random", seed=5, shuffle_outputs=True)
    assert got.name == wired_circuit(8, 3, "random", seed=5).name


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"seed": np.float64(5)}, r"wired_circuit: expected an int seed, found float64"),
    ({"shuffle_outputs": np.int8(1)}, r"wired_circuit: expected shuffle_outputs True or False, found int8 np\.int8\(1\)"),
])
def test_wired_circuit_refuses_non_integers(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        wired_circuit(8, 3, "random", **kwargs)  # type: ignore[arg-type]


def test_standard_library_numpy_bool() -> None:
    assert standard_library(np.bool_(True)) == standard_library(True)
    with pytest.raises(UsageError, match=r"standard_library: expected quick True or False, found int64 np\.int64\(1\)"):
        standard_library(np.int64(1))  # type: ignore[arg-type]


def test_golden_check_keeps_a_refuted_report_inside_a_mapping(tmp_path) -> None:
    """A refuted report is a settled result wherever it sits; an unknown one beside it fails the check."""
    import symverify as sv
    from symverify.pytest_plugin import GoldenFile
    from symverify.testing import assert_refuted

    x = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)
    y = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1] + 1], n=1, d=2)
    refuted = assert_refuted(x, y)
    GoldenFile(tmp_path, "t", True).check({"claim": (refuted,)})
    GoldenFile(tmp_path, "t", False).check({"claim": (refuted,)})
    assert '"verdict": "refuted"' in (tmp_path / "t.json").read_text(encoding="utf-8")
    unknown = sv.verify(x, x, method="z3", timeout=1e-9)
    assert not unknown.proved and not unknown.refuted
    with pytest.raises(pytest.fail.Exception, match=r"'claim': verify's verdict is unknown"):
        GoldenFile(tmp_path, "u", True).check({"claim": (refuted, unknown)})
    assert not (tmp_path / "u.json").exists()


def test_check_plain_walks_a_side_once_by_identity(monkeypatch) -> None:
    """``verify`` reads a side (``as_side``) and the randomized method then encodes it: the parts of
    that very object are walked once; an equal but distinct object is walked again."""
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.provers import fingerprint

    walked: list[int] = []
    real = fingerprint._circuit_parts

    def counting(c: Circuit, where: str, state: object = None) -> None:
        walked.append(id(c))
        real(c, where, state)

    monkeypatch.setattr(fingerprint, "_circuit_parts", counting)
    monkeypatch.setitem(fingerprint._PARTS, Circuit, counting)
    c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    fingerprint.check_plain(c, "lhs")
    fingerprint.check_plain(c, "rhs")
    enc = fingerprint.encode(c)
    assert walked == [id(c)]
    twin = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
    assert fingerprint.encode(twin) == enc
    assert walked == [id(c), id(twin)]


def test_a_refused_side_is_refused_every_time() -> None:
    """Only a side found plain is remembered: one holding a subclass is refused on every read."""
    from symverify.kernel.ir.circuit import Circuit, Gate
    from symverify.kernel.provers.fingerprint import EncodingError, check_plain, encode

    class SubGate(Gate):
        pass

    bad = Circuit(1, 1, (SubGate(Gate.mul(0, 0).op, (0, 0)),), (1,))
    for _ in range(2):
        with pytest.raises(EncodingError, match=r"^rhs: expected every gate of type Gate exactly, found an instance of .*SubGate"):
            check_plain(bad, "rhs")
    with pytest.raises(EncodingError, match=r"^encoding: expected every gate of type Gate exactly"):
        encode(bad)


def test_plot_model_takes_numpy_sizes() -> None:
    """Sizes as numpy numbers are inches like ints and floats; a numpy bool or NaN is still refused."""
    pytest.importorskip("matplotlib")
    import symverify as sv
    from symverify.viz import plot_model

    model = sv.compile(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2)).model
    fig = plot_model(model, width=np.int64(7), height=np.float32(4.5))
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)
    for bad, found in ((np.bool_(True), "True"), (np.float32("nan"), "nan"), (np.int64(501), "501")):
        with pytest.raises(UsageError, match=rf"plot_model: width must be None \(sized by the content\) or inches in \(0, 500\], found .*{found}"):
            plot_model(model, width=bad)


def test_ir_objects_and_results_survive_pickling() -> None:
    """Circuits, compiled results (model and certificate), reports and ∀-gadgets round-trip through
    pickle (as Dask sends them) equal to themselves, and the copies are proved as the originals are."""
    import pickle

    import symverify as sv
    from symverify.parametric.library import shift_down

    c = random_circuit(4, 2, 40, 3, seed=1)
    compiled = sv.compile(c)
    report = sv.verify(c, compiled)
    assert report.proved
    gadget = shift_down()
    for obj in (c, compiled, compiled.model, compiled.certificate, report, gadget):
        copy = pickle.loads(pickle.dumps(obj))
        assert copy == obj and type(copy) is type(obj)
    again = sv.verify(pickle.loads(pickle.dumps(c)), pickle.loads(pickle.dumps(compiled)), method="compositional")
    assert again.proved
    assert sv.verify(pickle.loads(pickle.dumps(c)), c, method="randomized").proved


def test_golden_file_read_in_short_reads(tmp_path, monkeypatch) -> None:
    """``os.read`` may return fewer bytes than asked before the end of a file: the golden file is
    read to its end (a first short read was taken for the whole file, a false mismatch)."""
    import os

    import symverify as sv
    from symverify import pytest_plugin
    from symverify.pytest_plugin import GoldenFile

    report = sv.verify(sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2),
                       sv.Circuit.trace(lambda u: [u[0][1] * u[0][0]], n=1, d=2), method="exact")
    GoldenFile(tmp_path, "t", True).check(report)
    real = os.read
    monkeypatch.setattr(pytest_plugin.os, "read", lambda fd, n: real(fd, min(n, 7)))
    GoldenFile(tmp_path, "t", False).check(report)
    changed = (tmp_path / "t.json").read_text(encoding="utf-8").replace('"exact"', '"exakt"')
    assert '"exakt"' in changed
    (tmp_path / "t.json").write_text(changed, encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match=r"golden mismatch"):
        GoldenFile(tmp_path, "t", False).check(report)
