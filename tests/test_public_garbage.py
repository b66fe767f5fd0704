"""Every public callable of symverify's non-kernel modules, called with garbage (None, a str, a
float, a negative, zero, bool or huge int, a list, a dict, bytes, NaN, an object in every required argument), answers with a
:class:`~symverify.errors.SymverifyError` saying what it expected, or returns (a record, a lazy
context manager, a value the garbage happens to be valid for): never a bare ``TypeError``,
``AttributeError``, ``ValueError``, ``IndexError`` or ``KeyError`` from deep inside.

Internal builders (the Theorem H.21 and Lemma H.16 layer builders, the layout functions, the pruner,
the engines' cost model) take the compiler's own objects and are checked once at its entry; they
are left out of their modules' ``__all__`` and so out of this test. Of the kaleidoscope package,
the structured-map helpers (``kaleidoscope.structured``) and the float programs
(``kaleidoscope.numeric``: ``check_range``, ``compile_numpy``, …) are listed; of the file loaders,
``ir.files`` and ``ir.serialize``. Not listed here: the rest of the kaleidoscope package, the
parametric, command-line and script-runner packages, ``ir.jsonfields`` and ``viz.run_format``, and
the kernel's own re-exports (``ir.scalar``, ``ir.circuit``, ``ir.baseconv``)."""

from __future__ import annotations

import enum
import importlib
import inspect
from typing import Any

import pytest

from symverify.errors import SymverifyError

MODULES = [
    "symverify", "symverify.library", "symverify.library_gated", "symverify.mutate", "symverify.testing",
    "symverify.strategies", "symverify.verification",
    "symverify.compiler", "symverify.compiler.gated", "symverify.compiler.retnet", "symverify.compiler.dense",
    "symverify.compiler.kaleidoscope", "symverify.compiler.butterfly_to_baseconv", "symverify.compiler.circuit_to_baseconv",
    "symverify.compiler.result", "symverify.compiler.layout", "symverify.compiler.needed", "symverify.compiler.prune",
    "symverify.compiler.h21", "symverify.compiler.h21.emit", "symverify.compiler.h21.placement",
    "symverify.compiler.h21.planner", "symverify.compiler.h21.routes", "symverify.compiler.h21.size",
    "symverify.compiler.h21.stages",
    "symverify.gadgets.causal", "symverify.gadgets.compose", "symverify.gadgets.primitives", "symverify.gadgets.remember",
    "symverify.gadgets.layout",
    "symverify.semantics.exact", "symverify.semantics.layered",
    "symverify.executors", "symverify.deadline", "symverify.progress", "symverify.provers.engine_cost",
    "symverify.provers.dask_address", "symverify.ir.limits", "symverify.executors.synthetic",
    "symverify.ir.bigint", "symverify.ir.build", "symverify.ir.trace", "symverify.ir.value_memo",
    "symverify.viz", "symverify.viz.butterfly", "symverify.viz.html", "symverify.viz.model", "symverify.viz.resources",
    "symverify.viz.weights",
    "symverify.executors.numeric", "symverify.executors.inputs", "symverify.executors.circuit_plan",
    "symverify.executors.program", "symverify.executors.zoology", "symverify.executors.zoology_gated",
    "symverify.executors.export", "symverify.executors.torch_float", "symverify.executors.zoology_native",
    "symverify.executors.cuda_graph",
    "symverify.kaleidoscope.structured", "symverify.kaleidoscope.numeric", "symverify.ir.files", "symverify.ir.serialize",
]

GARBAGE = [None, "x", 1.5, -3, True, 10**40, [1, 2], {}, b"x", float("nan"), object(), (), -10**40, 0]


def _public() -> dict[str, Any]:
    out: dict[str, Any] = {}
    seen: set[int] = set()
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            try:
                obj = getattr(module, attr)
            except (ImportError, SymverifyError):  # an optional backend (torch) not installed
                continue
            if not callable(obj) or id(obj) in seen:
                continue
            if inspect.isclass(obj) and issubclass(obj, (BaseException, enum.Enum)):
                continue  # raising an exception class, or an enum's lookup, is Python's own
            seen.add(id(obj))
            out[f"{name}.{attr}"] = obj
    return out


PUBLIC = _public()


def _required(fn: Any) -> tuple[list[str], list[str]]:
    params = inspect.signature(fn).parameters.values()
    positional = [p.name for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = [p.name for p in params if p.default is p.empty and p.kind is p.KEYWORD_ONLY]
    return positional, keywords


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_garbage_arguments_get_a_symverify_error(name: str) -> None:
    fn = PUBLIC[name]
    try:
        positional, keywords = _required(fn)
    except (TypeError, ValueError):  # no signature to read (a builtin)
        pytest.skip(f"{name}: no signature")
    if not positional and not keywords:
        pytest.skip(f"{name}: takes no required argument")
    for junk in GARBAGE:
        try:
            fn(*[junk] * len(positional), **dict.fromkeys(keywords, junk))
        except SymverifyError as e:
            assert str(e).strip(), f"{name}({junk!r}): {type(e).__name__} with no message"
        except Exception as e:
            pytest.fail(f"{name}({junk!r:.20}, …) raised {type(e).__name__}: {str(e)[:200]}, not a SymverifyError")


def test_the_internal_builders_are_not_exported() -> None:
    """``block_taps``, ``needed_part`` of the planner, the layout functions and others crashed with
    TypeError, AttributeError or IndexError on garbage: internal, they left ``__all__``."""
    from symverify.compiler import butterfly_to_baseconv, circuit_to_baseconv, h21, layout, prune
    from symverify.compiler.h21 import planner, routes

    for module, name in ((butterfly_to_baseconv, "block_taps"), (butterfly_to_baseconv, "conv_layer"),
                         (circuit_to_baseconv, "mul_layers"), (h21, "plan_stages"), (planner, "needed_part"),
                         (routes, "route_layers"), (layout, "form_cell"), (prune, "prune_structural_zeros")):
        assert name not in module.__all__ and callable(getattr(module, name))  # still importable by name


def _messages() -> list[tuple[Any, type, str]]:
    from symverify import deadline, mutate
    from symverify.compiler import dense, kaleidoscope, needed, result
    from symverify.errors import CompileError, IRError, LimitError, SerializationError, UsageError
    from symverify.executors import cross_check
    from symverify.gadgets import compose
    from symverify.ir import bigint, limits, serialize
    from symverify.kaleidoscope import numeric, structured
    from symverify.semantics import layered

    return [
        (lambda: mutate.mode_matters(None), UsageError, r"mode_matters: expected a Layer, found NoneType"),
        (lambda: compose.interface_mismatch("a", None), IRError, r"interface_mismatch: argument 0 is a str, not a Fragment"),
        (lambda: layered.check_layered(None, None, None, []), IRError, r"check_layered: c: expected a Circuit, found NoneType"),
        (lambda: layered.apply_stage(None, [], None), IRError,
         r"apply_stage: expected a LinearStage or MulStage, found NoneType"),
        (lambda: dense.dense_bounds(2, "3", 4), CompileError, r"dense_bounds: width: expected a non-negative int, found str '3'"),
        (lambda: kaleidoscope.kaleidoscope_bounds(1, 2, 1, 1.5, 1, 1), CompileError,
         r"kaleidoscope_bounds: n_k: expected a non-negative int, found float 1.5"),
        (lambda: kaleidoscope.kaleidoscope_bounds(1, 2, 0, 4, 1, 1), CompileError, r"expected d ≥ 1 and n_k ≥ 1, found d = 0"),
        (lambda: needed.needed_part([1, 2]), CompileError, r"needed_part: expected a Circuit, found list"),
        (lambda: result.source_meta("c"), CompileError, r"source_meta: expected a Circuit, found str"),
        (lambda: deadline.as_check("soon"), UsageError, r"deadline: expected a time.monotonic\(\) deadline .*found str"),
        (lambda: cross_check([], 2, 2, [], dtype="float64", seed=0, points=10**40), LimitError, r"cross_check: 10{40} points"),
        (lambda: cross_check([], 2, 2, [], dtype="float64", seed=None, points=2), UsageError,
         r"cross_check: seed: expected an int, found NoneType None"),
        (lambda: cross_check(None, 2, 2, [], dtype="float64", seed=0, points=2), UsageError,
         r"cross_check: sides: expected a list of \(name, kind, object\) triples, found None"),
        # check read any global of its module: "check" (a function) gave TypeError, a misspelt name KeyError
        (lambda: limits.check(5, "check", "w"), UsageError, r"limits.check: limit: expected one of MAX_CELLS, .*found 'check'"),
        (lambda: limits.check(5, "MAX_CELS", "w"), UsageError, r"found 'MAX_CELS'"),
        (lambda: limits.check(None, "MAX_CELLS", "w"), UsageError, r"limits.check: count: expected a number, found NoneType"),
        # the printers read bit_length (AttributeError) or int() (a float 0.5 shown as "0")
        (lambda: bigint.show_int(2.5), IRError, r"show_int: expected an int, found float"),
        (lambda: bigint.show_rational(0.5), IRError, r"show_rational: expected an int or a Fraction, found float"),
        (lambda: bigint.rational_to_str("1/2"), IRError, r"rational_to_str: expected an int or a Fraction, found str"),
        (lambda: bigint.str_to_int(12, "w"), IRError, r"w: expected a str of decimal digits, found int"),
        (lambda: bigint.field_repr(3), IRError, r"field_repr: expected a dataclass instance, found int"),
        (lambda: bigint.short_name(None), IRError, r"short_name: expected a str and a width ≥ 1, found NoneType"),
        # the structured-map helpers unpacked keys and stages (TypeError, ValueError) or called range() on garbage
        (lambda: structured.single_factor({(0, 9): 1}, 4), IRError,
         r"single_factor: ents: expected \(row, column\) keys of ints in \[0, 4\), found \(0, 9\)"),
        (lambda: structured.single_factor({}, 6), IRError, r"single_factor: size: expected a power of two ≥ 2, found int 6"),
        (lambda: structured.pack_bbstars([None], 4), IRError,
         r"pack_bbstars: factors\[0\]: expected a ButterflyFactor of size 4, found NoneType"),
        (lambda: structured.structured_stages([], -1, 0), IRError, r"structured_stages: n: expected a non-negative int, found int -1"),
        (lambda: structured.structured_kaleidoscope([], 10**40, 0), LimitError, r"structured_stages: n"),
        (lambda: numeric.check_range([(1, 2)], "float64"), IRError, r"check_range: stages\[0\]: expected a \(stride, T0, T1\) triple"),
        (lambda: numeric.check_range([(1, "x", [1])], "float64"), IRError, r"check_range: stages\[0\]: expected twiddles of numbers"),
        (lambda: serialize.json_value(b"{}"), SerializationError,
         r"json_value: expected the text of a JSON document \(a str\), found bytes"),
    ]


@pytest.mark.parametrize("k", range(len(_messages())))
def test_each_entry_says_what_it_expected(k: int) -> None:
    call, error, match = _messages()[k]
    with pytest.raises(error, match=match):
        call()


def test_the_torch_modules_check_their_sizes() -> None:
    pytest.importorskip("torch")
    from symverify.errors import LimitError, ShapeError
    from symverify.executors import BaseConvStack, ZoologyBaseConv

    with pytest.raises(ShapeError, match=r"BaseConvStack: inner_n: expected a positive int, found float 2.0"):
        BaseConvStack(2, 1, 2.0, 1, [])
    with pytest.raises(ShapeError, match=r"BaseConvStack: layers: expected a list or tuple of BaseConvLayer, found a int among them"):
        BaseConvStack(2, 1, 2, 1, [1])
    with pytest.raises(ShapeError, match=r"ZoologyBaseConv: l_max: expected a positive int, found int -3"):
        ZoologyBaseConv(2, -3)
    with pytest.raises(LimitError, match=r"ZoologyBaseConv\(d_model=2, l_max=10{40}\) weights"):
        ZoologyBaseConv(2, 10**40)


@pytest.mark.parametrize("k", [-3, -1, 0, 1.5, True, None, "2"])
def test_power_refuses_an_exponent_below_one(k: object) -> None:
    """``symverify.ir.scalar.power(x, -3)`` looped forever (``-1 >> 1`` is ``-1``) and ``power(x, 0)``
    returned None."""
    from symverify.errors import IRError
    from symverify.ir.scalar import power

    class Counting:
        """A base whose products are counted: a loop that does not end fails here, not by hanging."""

        products = 0

        def __mul__(self, other: object) -> Counting:
            Counting.products += 1
            assert Counting.products < 200, "power multiplied without end"
            return self

    with pytest.raises(IRError, match=r"power: expected an int exponent k ≥ 1, found"):
        power(Counting(), k)
    assert power(3, 5) == 243


def test_size_searches_and_model_builders_refuse_sizes_that_never_end() -> None:
    """``fft_size(10**40)`` searched for a 5-smooth number without end, and ``dense_model(4, 2,
    10**40)`` built layers without end: both are refused before any work."""
    from symverify.errors import CompileError, LimitError, ShapeError
    from symverify.executors.synthetic import dense_model, impulse_model
    from symverify.executors.zoology_native import fft_size

    with pytest.raises(CompileError, match=r"fft_size: expected an int length in \[0, MAX_CELLS = \d+\], found int 1000"):
        fft_size(10**40)
    with pytest.raises(CompileError, match=r"fft_size: .*found float 7.5"):
        fft_size(7.5)
    with pytest.raises(LimitError, match=r"dense_model\(4, 2, 10{40}\): layers"):
        dense_model(4, 2, 10**40)
    with pytest.raises(ShapeError, match=r"impulse_model: inner_d: expected a positive int, found float 2.0"):
        impulse_model(4, 2.0, 3)
    assert fft_size(100) == 200 and len(dense_model(4, 2, 3).layers) == 3 == len(impulse_model(4, 2, 3).layers)


def test_the_zoology_reference_modules_check_their_sizes() -> None:
    """``ZoologyHyena("x", 4)`` and ``ZoologyH3(-3)`` failed inside torch (TypeError, RuntimeError)."""
    pytest.importorskip("torch")
    from symverify.errors import LimitError, ShapeError
    from symverify.executors.zoology_gated import ZoologyH3, ZoologyHyena

    with pytest.raises(ShapeError, match=r"ZoologyHyena: d_model: expected a positive int, found str 'x'"):
        ZoologyHyena("x", 4)
    with pytest.raises(ShapeError, match=r"ZoologyH3: d_model: expected a positive int, found int -3"):
        ZoologyH3(-3)
    with pytest.raises(ShapeError, match=r"ZoologyH3: l_max: expected a positive int, found float 4.0"):
        ZoologyH3(2, 8, 4.0)
    with pytest.raises(LimitError, match=r"ZoologyHyena\(d_model=2, l_max=10{40}\) weights"):
        ZoologyHyena(2, 10**40)
    assert ZoologyH3(2).L is None and ZoologyHyena(2, 4).l_max == 4
