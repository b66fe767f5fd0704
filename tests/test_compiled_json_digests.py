"""``Compiled.to_json`` (``symverify compile --json``) names the model and source circuit by the
digests ``verify`` reports for them: two compile results of equal shape and resources but other
models had identical JSON."""

from __future__ import annotations

import dataclasses

import symverify as sv
from symverify.ir.build import trace


def _pair(k: int):
    c = trace(lambda u: [u[0][0] * u[0][0] * k], 1, 1, f"square times {k}")
    return c, sv.compile(c)


def test_the_json_names_the_model_and_source_as_verify_does() -> None:
    c, out = _pair(2)
    js = out.to_json()
    report = sv.verify(c, out)
    assert js["source_digest"] == report.lhs["digest"] and js["model_digest"] == report.rhs["digest"]


def test_other_models_of_equal_shape_have_other_json() -> None:
    (_, a), (_, b) = _pair(2), _pair(3)
    ja, jb = a.to_json(), b.to_json()
    assert {k: v for k, v in ja.items() if not k.endswith("_digest")} == {k: v for k, v in jb.items() if not k.endswith("_digest")}
    assert ja["model_digest"] != jb["model_digest"] and ja["source_digest"] != jb["source_digest"]


def test_without_a_source_only_the_model_is_named() -> None:
    _, out = _pair(2)
    js = dataclasses.replace(out, source=None).to_json()
    assert "source_digest" not in js and js["model_digest"].startswith("sha256:")
