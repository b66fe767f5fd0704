"""symverify.scripts.protocol: claim kinds as text, outcomes without a method, the append-only
instance list, the index and sweep-grid parsers, and ``script_main``'s argument checks.

Each test names the function of ``symverify/scripts/protocol.py`` it is for and why its assertion
bites.
"""

import json

import pytest

from symverify.errors import UsageError
from symverify.gadgets.primitives import shift_down
from symverify.kernel.provers.fragment import prove_fragment
from symverify.kernel.provers.outcome import Verdict
from symverify.scripts.protocol import (
    SWEEP_ENV,
    ClaimKind,
    Instance,
    ProofResult,
    parse_indices,
    script_main,
    sweep_grid,
)


def test_claim_kinds_print_as_their_value():
    """ClaimKind.__str__: the run JSON and the tables show 'prover', not 'ClaimKind.PROVER'."""
    assert [str(k) for k in ClaimKind] == ["prover", "computed", "argued"]
    assert f"{ClaimKind.ARGUED}" == "argued"


def test_an_outcome_without_a_method_needs_method_given():
    """Instance.from_report: a FragmentProof names no method, so the instance cannot make one up;
    with method= the verdict is the proof's own (shift_down is an exact gadget)."""
    proof = prove_fragment(shift_down(3, 1, 1))
    assert proof.verdict is Verdict.PROVED
    with pytest.raises(UsageError, match="the outcomes do not all name their method; pass method="):
        Instance.from_report("shift", proof)
    inst = Instance.from_report("shift", proof, method="exact")
    assert inst.verdict is Verdict.PROVED and inst.method == "exact" and inst.kind is ClaimKind.PROVER


def test_instances_are_append_only():
    """_Instances.__iadd__ keeps the order and returns the same list; _Instances.insert is refused,
    since the order of instances is the order of the cases."""
    r = ProofResult("p", "T")
    a = Instance.computed("a", True, "c", "exact")
    b = Instance.computed("b", False, "c", "exact")
    same = r.instances
    r.instances += [a, b]
    assert r.instances is same and [i.name for i in r.instances] == ["a", "b"]
    with pytest.raises(TypeError, match="only appended"):
        r.instances.insert(0, a)
    assert [i.name for i in r.instances] == ["a", "b"]


def test_parse_indices_refuses_a_range_of_more_than_a_million():
    """parse_indices: at most 10^6 values per range (10^6 exactly is fine)."""
    assert len(parse_indices("0-999999")) == 1_000_000
    with pytest.raises(UsageError, match=r"--cases: the range 0-1000000 names more than 10\^6 values"):
        parse_indices("5,0-1000000", "--cases")


@pytest.mark.parametrize("text", ["{not json", '{"widths": [1, 2]'])
def test_sweep_grid_refuses_text_that_is_not_json(monkeypatch, text):
    """sweep_grid: the environment variable holds JSON, else a UsageError quoting it."""
    monkeypatch.setenv(SWEEP_ENV, text)
    with pytest.raises(UsageError, match=f"{SWEEP_ENV}: expected a JSON object, found"):
        sweep_grid({"widths": [1]})


def run_two(quick=False):
    r = ProofResult("two", "T")
    r.instances.append(Instance.computed("c", True, "c", "exact"))
    return r


@pytest.mark.parametrize("shard", ["a/b", "1/2/3", "2/2", "-1/3", "0/0"])
def test_script_main_refuses_a_bad_shard(shard, capsys):
    """_script_main (behind script_main): --shard is K/N with 0 ≤ K < N; anything else exits 2 with
    the message."""
    with pytest.raises(SystemExit) as e:
        script_main(run_two, [f"--shard={shard}"])
    assert e.value.code == 2
    assert f"--shard: expected K/N, two numbers of digits 0-9 with 0 ≤ K < N, found {shard!r}" in capsys.readouterr().err


def test_script_main_without_json_prints_only(tmp_path, capsys, monkeypatch):
    """_script_main (behind script_main): no --json, no file; the table is printed and the exit code
    is the result's."""
    monkeypatch.chdir(tmp_path)
    assert script_main(run_two, []) == 0
    assert "c" in capsys.readouterr().out and list(tmp_path.iterdir()) == []
    out = tmp_path / "r.json"
    assert script_main(run_two, ["--json", str(out)]) == 0
    assert json.loads(out.read_text())["instances"][0]["name"] == "c"


def test_script_main_runs_with_the_script_collector_thresholds_and_restores_them(tmp_path, monkeypatch):
    """script_main: the proof script runs with SCRIPT_GC_THRESHOLDS (its full collections over
    long-lived exact values were about 13 % of its CPU); the caller's thresholds come back after
    the run, also when the run raises."""
    import gc

    from symverify.scripts.protocol import SCRIPT_GC_THRESHOLDS

    monkeypatch.chdir(tmp_path)
    seen = []

    def run(quick=False):
        seen.append(gc.get_threshold())
        return run_two(quick)

    def boom(quick=False):
        raise UsageError("stop here")

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert script_main(run, []) == 0
        assert seen == [SCRIPT_GC_THRESHOLDS] and SCRIPT_GC_THRESHOLDS[0] >= 10_000
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(UsageError, match="stop here"):
            script_main(boom, [])
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
