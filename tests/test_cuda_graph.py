"""The opt-in CUDA-graph replay of float models: off by default, its capture/replay logic on a stand-in graph."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from symverify.executors import cuda_graph  # noqa: E402
from symverify.executors.cuda_graph import _Graphed, enabled, graphed_run  # noqa: E402


class FakeGraph:
    """Stands in for ``torch.cuda.CUDAGraph``: replay recomputes the captured call on the static input."""

    def __init__(self, run, static_x, static_y) -> None:
        self.run, self.x, self.y, self.replays = run, static_x, static_y, 0

    def replay(self) -> None:
        self.replays += 1
        self.y.copy_(self.run(self.x))


def test_off_by_default_and_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYMVERIFY_CUDA_GRAPHS", raising=False)
    assert not enabled()
    x = torch.ones(2, 3)
    assert graphed_run({}, "k", lambda s: s * 2, x) is None
    monkeypatch.setenv("SYMVERIFY_CUDA_GRAPHS", "1")
    assert enabled() and graphed_run({}, "k", lambda s: s * 2, x) is None  # a CPU tensor runs eagerly


def test_capture_once_replay_after_and_a_failed_capture_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMVERIFY_CUDA_GRAPHS", "1")
    monkeypatch.setattr(cuda_graph, "_on_cuda", lambda x: True)
    captures = []

    def fake_capture(run, x):
        sx = x.clone()
        g = FakeGraph(run, sx, run(sx).clone())
        captures.append(g)
        return _Graphed(g, sx, g.y)

    monkeypatch.setattr(cuda_graph, "_capture", fake_capture)
    cache: dict = {}
    run = lambda s: s * 3 + 1  # noqa: E731
    a, b = torch.arange(6.0).view(2, 3), torch.full((2, 3), 2.0)
    assert torch.equal(graphed_run(cache, "k", run, a), run(a))
    out_b = graphed_run(cache, "k", run, b)
    assert torch.equal(out_b, run(b)) and len(captures) == 1 and captures[0].replays == 2
    out_b.add_(100)  # the caller owns a copy: the static output is untouched
    assert torch.equal(captures[0].y, run(b))
    busy = cache[next(iter(cache))]
    with busy.lock:
        assert graphed_run(cache, "k", run, a) is None  # another call holds the graph: run eagerly

    def failing(run, x):
        raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(cuda_graph, "_capture", failing)
    assert graphed_run(cache, "other", run, a) is None
    assert False in cache.values()
    monkeypatch.setattr(cuda_graph, "_capture", fake_capture)
    assert graphed_run(cache, "other", run, a) is None  # not retried for that key
