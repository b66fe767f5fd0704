"""Seeded mutation operators: one small change to a model, a circuit or a certificate.

Soundness testing needs objects that are *almost* right. Every operator here makes exactly one
change and returns a new, valid object built through the public IR classes (:class:`Grid`,
:class:`Layer`, :class:`Model`, :class:`Gate`, :class:`Circuit`, :class:`Cell`, :class:`Boundary`,
:class:`Certificate`), so the constructors' validation runs on every mutant. A mutant may compute
the same polynomials as the original (a weight that only multiplies zeros, a coefficient on an
operand nobody reads): deciding that is the caller's business (exact expansion on small instances).
A change that cannot alter what the object computes or claims, whatever the rest of it holds, is
refused (:class:`UsageError`) and never drawn: a mode flip of a layer whose filter has taps at lag 0
only (:func:`mode_matters`), rewiring a LIN operand of coefficient 0, moving a certificate term of
coefficient 0 or dropping a cell that claims 0; :func:`gate_mutant` draws only gates some output
depends on unless asked otherwise.

Three families, each with a deterministic ``*_mutant(obj, seed)`` that picks an operator and a site
from a seeded :class:`random.Random` (the same seed gives the same mutant on every platform):

* **weights** of a :class:`Model` (:data:`WEIGHT_OPERATORS`): one cell of one of ``W``, ``b1``,
  ``h``, ``b2`` in one layer, or one layer's convolution mode;
* **gates** of a :class:`Circuit` (:data:`GATE_OPERATORS`): one gate's op, coefficient or operand,
  or the order of the outputs;
* **certificate cells** (:data:`CERTIFICATE_OPERATORS`): what one listed cell claims to hold.

>>> from symverify.kernel.ir.circuit import Circuit, Gate
>>> c = Circuit(1, 2, (Gate.mul(0, 1),), (2,))
>>> m = gate_mutant(c, seed=0, operators=("op",))
>>> m.operator, str(m.obj.gates[0])
('op', 'lin (1)·%0 + (1)·%1')
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from symverify.errors import IRError, UsageError
from symverify.ir.bigint import safe_repr
from symverify.kernel.ir.baseconv import Layer, Mode, Model
from symverify.kernel.ir.certificate import Boundary, Cell, Certificate
from symverify.kernel.ir.circuit import Circuit, Gate, Op
from symverify.kernel.ir.grid import Grid
from symverify.kernel.ir.scalar import Scalar, is_zero, show_scalar, sym

__all__ = [
    "Mutation",
    "WeightSite",
    "M61",
    "WEIGHT_OPERATORS",
    "DEFAULT_WEIGHT_OPERATORS",
    "GATE_OPERATORS",
    "DEFAULT_GATE_OPERATORS",
    "CERTIFICATE_OPERATORS",
    "MAX_MUTANTS",
    "weight_sites",
    "get_weight",
    "set_weight",
    "mutate_weight",
    "flip_mode",
    "mode_matters",
    "weight_mutant",
    "mutate_gate",
    "swap_outputs",
    "gate_mutant",
    "mutate_cell",
    "certificate_mutant",
    "mutants",
]

M61 = (1 << 61) - 1
GRIDS = ("W", "b1", "h", "b2")


@dataclass(frozen=True)
class Mutation:
    """One applied mutation: the new object, the operator's name and where it struck (text)."""

    obj: Any
    operator: str
    site: str

    def __str__(self) -> str:
        return f"{self.operator} at {self.site}"


def _rng(family: str, seed: int) -> random.Random:
    # A string seed is hashed (SHA-512) by random.Random: stable across runs and platforms.
    _int(seed, f"{family}_mutant: seed")
    return random.Random(f"symverify-mutate-{family}-{seed}")


def _int(value: object, what: str) -> int:
    """``value`` if it is an int (not a bool: ``True`` is no seed or index); else :class:`UsageError`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise UsageError(f"{what}: expected an int, found {safe_repr(value, 40)}")
    return value


def _index(value: object, size: int, what: str) -> int:
    """``value`` as an index in ``[0, size)`` (negative indices do not count from the end here)."""
    if not 0 <= _int(value, what) < size:
        raise UsageError(f"{what}: expected an index in [0, {size}), found {value}")
    return value  # type: ignore[return-value]


def _flag(value: object, what: str) -> bool:
    """``value`` if it is a bool (``'no'`` would read as true); else :class:`UsageError`."""
    if not isinstance(value, bool):
        raise UsageError(f"{what}: expected True or False, found {safe_repr(value, 40)}")
    return value


def _operators(operators: object, table: dict[str, str], where: str) -> tuple[str, ...]:
    """``operators`` as a tuple of names in ``table``: a non-empty list or tuple of them, not a bare
    string (``"inc"`` would read as the operators ``'i'``, ``'n'``, ``'c'``); else :class:`UsageError`."""
    names = ", ".join(table)
    if isinstance(operators, str):
        raise UsageError(f"{where}: operators: expected a tuple of operator names among {names}, found the string "
                         f"{safe_repr(operators, 40)} (write ({safe_repr(operators, 40)},) for one operator)")
    if not isinstance(operators, (tuple, list)) or not operators:
        raise UsageError(f"{where}: operators: expected a non-empty tuple of operator names among {names}, "
                         f"found {safe_repr(operators, 60)}")
    unknown = [op for op in operators if not isinstance(op, str) or op not in table]
    if unknown:
        raise UsageError(f"{where}: expected operators among {names}, found {list(operators)}")
    return tuple(operators)


def _symbol(value: object, where: str) -> str:
    """``value`` if it names a parameter (:func:`~symverify.kernel.ir.scalar.sym` takes it); else a
    :class:`UsageError` naming the argument. Checked before any operator is drawn: a name the ``sym``
    operators alone read would otherwise fail only for the seeds that draw them."""
    try:
        sym(value)  # type: ignore[arg-type]
    except IRError as e:
        raise UsageError(f"{where}: symbol: {e}") from None
    return value  # type: ignore[return-value]


def _expect(obj: object, cls: type, where: str) -> None:
    if not isinstance(obj, cls):
        raise UsageError(f"{where}: expected a {cls.__name__}, found {type(obj).__name__}")


# ---- single-weight mutants of a Model ------------------------------------------------------------


@dataclass(frozen=True, order=True)
class WeightSite:
    """Cell ``(row, col)`` of grid ``grid`` (``W``, ``b1``, ``h`` or ``b2``) in layer ``layer``."""

    layer: int
    grid: str
    row: int
    col: int

    def __str__(self) -> str:
        return f"layer {self.layer} {self.grid}[{self.row}][{self.col}]"


def _new_value(op: str, v: Scalar, symbol: str) -> Scalar:
    """The value operator ``op`` puts in a cell that holds ``v`` (UsageError if it does not apply)."""
    if op == "inc":
        return v + 1
    if op == "neg":
        if is_zero(v):
            raise UsageError("weight operator 'neg' needs a nonzero cell (−0 = 0)")
        return -v
    if op == "zero":
        if is_zero(v):
            raise UsageError("weight operator 'zero' needs a nonzero cell")
        return 0
    if op == "one":
        if not is_zero(v):
            raise UsageError(f"weight operator 'one' needs a zero cell, found {show_scalar(v)}")
        return 1
    if op == "sym":
        s = sym(symbol)
        if v == s:
            raise UsageError(f"weight operator 'sym': the cell already holds {symbol}")
        return s
    if op == "add_p":
        return v + M61
    if op == "frac_p":
        return v + Fraction(1, M61)
    if op == "mode":
        raise UsageError("weight operator 'mode' changes a layer's convolution mode, not a cell: use flip_mode(model, layer)")
    raise UsageError(f"weight operator: expected one of {', '.join(WEIGHT_OPERATORS)}, found {op!r}")


#: Operator name → what it does to the chosen cell (the docstring of :func:`mutate_weight`).
WEIGHT_OPERATORS: dict[str, str] = {
    "inc": "v → v + 1 (any cell)",
    "neg": "v → −v (a nonzero cell)",
    "zero": "v → 0 (a nonzero cell)",
    "one": "0 → 1 (a zero cell)",
    "sym": "v → the symbolic weight sym(symbol) (any cell; 'for all values of the new weight')",
    "add_p": "v → v + (2^61 − 1): invisible modulo the Mersenne prime the randomized method prefers",
    "frac_p": "v → v + 1/(2^61 − 1): a denominator the prime 2^61 − 1 divides (no residue mod that prime)",
    "mode": "flip one layer's convolution mode (causal ↔ cyclic), a layer with a tap at a lag ≥ 1; the site names the layer",
}
DEFAULT_WEIGHT_OPERATORS = ("inc", "neg", "zero", "one", "sym")


def weight_sites(model: Model, nonzero: bool | None = True) -> list[WeightSite]:
    """Every cell of every grid in ``model``, in order: only the nonzero ones (``nonzero=True``,
    the default), only the zero ones (``False``) or all (``None``). Zero cells are enumerated
    densely, so ``nonzero=False`` and ``None`` cost ``L·(d'² + 3·N'·d')``."""
    _expect(model, Model, "weight_sites")
    if nonzero is not None:
        _flag(nonzero, "weight_sites: nonzero")
    out: list[WeightSite] = []
    for k, layer in enumerate(model.layers):
        for name, g in layer.grids():
            if nonzero:
                out.extend(WeightSite(k, name, i, j) for (i, j) in sorted(g.nonzero()))
                continue
            nz = g.nonzero()
            out.extend(WeightSite(k, name, i, j) for i in range(g.rows) for j in range(g.cols)
                       if nonzero is None or (i, j) not in nz)
    return out


def _check_site(model: Model, site: WeightSite) -> Grid:
    _expect(model, Model, "weight site")
    _expect(site, WeightSite, "weight site")
    for f in ("layer", "row", "col"):
        _int(getattr(site, f), f"weight site {site}: {f}")
    if not 0 <= site.layer < len(model.layers):
        raise UsageError(f"weight site {site}: the model has {len(model.layers)} layers")
    if site.grid not in GRIDS:
        raise UsageError(f"weight site {site}: expected a grid among {', '.join(GRIDS)}, found {site.grid!r}")
    g: Grid = getattr(model.layers[site.layer], site.grid)
    if not (0 <= site.row < g.rows and 0 <= site.col < g.cols):
        raise UsageError(f"weight site {site}: outside the {g.rows}×{g.cols} grid")
    return g


def get_weight(model: Model, site: WeightSite) -> Scalar:
    """The value at ``site``."""
    return _check_site(model, site).get(site.row, site.col)


def set_weight(model: Model, site: WeightSite, value: object) -> Model:
    """A copy of ``model`` with the cell at ``site`` set to ``value`` (everything else shared).

    The new grid is the old one with one more 1×1 rectangle painted on it; the layer and the model
    are rebuilt through their constructors, so shapes and values are validated again.
    """
    g = _check_site(model, site)
    grid = g.paint_cells([(site.row, site.col, value)])
    old = model.layers[site.layer]
    layer = Layer(**{name: (grid if name == site.grid else og) for name, og in old.grids()}, mode=old.mode)
    layers = (*model.layers[: site.layer], layer, *model.layers[site.layer + 1 :])
    return Model(model.n, model.d, model.inner_n, model.inner_d, layers, model.name)


def mutate_weight(model: Model, site: WeightSite, op: str, *, symbol: str | None = None) -> Model:
    """Apply weight operator ``op`` (a key of :data:`WEIGHT_OPERATORS` other than ``mode``) at ``site``.

    ``inc`` adds 1; ``neg`` negates a nonzero cell; ``zero`` clears a nonzero cell; ``one`` sets a
    zero cell to 1; ``sym`` replaces the value by the parameter ``sym(symbol)``; ``add_p`` adds
    ``2^61 − 1`` and ``frac_p`` adds ``1/(2^61 − 1)`` (adversarial: invisible to, or undefined in,
    arithmetic mod that prime). Raises :class:`UsageError` where the operator does not apply
    (``neg``/``zero`` on a zero cell, ``one`` on a nonzero one), and where ``symbol`` (default
    ``"m"``) is given to an operator other than ``sym``, which alone reads it.
    """
    if symbol is not None and op != "sym":
        raise UsageError(f"mutate_weight: symbol={safe_repr(symbol, 40)} is the parameter of operator 'sym' only; "
                         f"found operator {safe_repr(op, 40)}")
    return set_weight(model, site, _new_value(op, get_weight(model, site), "m" if symbol is None else _symbol(symbol, "mutate_weight")))


def mode_matters(layer: Layer) -> bool:
    """Whether ``layer``'s convolution mode can change what it computes: its filter ``h`` has a
    nonzero tap at a lag ``k ≥ 1`` (a row below the first). A tap at lag 0 reads ``x[i]`` into row
    ``i`` in both modes; only a tap at lag ``k ≥ 1`` reads past the top, wrapping to ``x[i − k + N']``
    when cyclic and reading 0 when causal. So a layer with taps at lag 0 only (the impulse ``e_0``
    most compiled layers use, or no taps) computes the same in both modes, on every input.
    Anything but a :class:`Layer` is a :class:`UsageError`."""
    _expect(layer, Layer, "mode_matters")
    return any(i >= 1 for i, _ in layer.h.nonzero())


def flip_mode(model: Model, layer: int) -> Model:
    """A copy of ``model`` whose layer ``layer`` convolves in the other mode (causal ↔ cyclic).
    A layer whose mode cannot change what it computes (:func:`mode_matters`: its filter has taps
    at lag 0 only) is a :class:`UsageError`: the copy would compute what ``model`` computes, a
    mutant no check can tell from the original."""
    _expect(model, Model, "flip_mode")
    if not 0 <= _int(layer, "flip_mode: layer") < len(model.layers):
        raise UsageError(f"flip_mode: the model has {len(model.layers)} layers, found layer {layer}")
    old = model.layers[layer]
    if not mode_matters(old):
        raise UsageError(f"flip_mode: expected a layer whose filter h has a tap at a lag ≥ 1 (a nonzero row ≥ 1), found "
                         f"layer {layer} with taps at lag 0 only: it computes the same causal or cyclic, so the flipped "
                         "model would compute what the original does")
    new = Layer(old.W, old.b1, old.h, old.b2, Mode.CYCLIC if old.mode is Mode.CAUSAL else Mode.CAUSAL)
    return Model(model.n, model.d, model.inner_n, model.inner_d,
                 (*model.layers[:layer], new, *model.layers[layer + 1 :]), model.name)


def _random_zero_site(model: Model, rng: random.Random, tries: int = 64) -> WeightSite | None:
    """A uniformly drawn layer, grid and cell that holds 0, redrawn up to ``tries`` times; when none
    of the draws hits a zero (a model nearly all nonzero), one of its zero cells drawn uniformly from
    their list (:func:`weight_sites` ``(model, nonzero=False)``). None only if the model has no zero cell:
    a zero cell the draws missed is no reason to report that operator ``one`` does not apply."""
    for _ in range(tries):
        k = rng.randrange(len(model.layers))
        name = rng.choice(GRIDS)
        g: Grid = getattr(model.layers[k], name)
        i, j = rng.randrange(g.rows), rng.randrange(g.cols)
        if is_zero(g.get(i, j)):
            return WeightSite(k, name, i, j)
    zeros = weight_sites(model, nonzero=False)
    return rng.choice(zeros) if zeros else None


def weight_mutant(model: Model, seed: int, operators: Sequence[str] = DEFAULT_WEIGHT_OPERATORS, *,
                  symbol: str = "m", nonzero: Sequence[WeightSite] | None = None) -> Mutation:
    """A single-weight mutant of ``model``, chosen by ``seed``.

    The operator is drawn uniformly from ``operators``; the site uniformly from the nonzero cells
    (``inc``, ``neg``, ``zero``, ``sym``, ``add_p``, ``frac_p``), from the zero cells (``one``: a
    random layer, grid and cell, redrawn until it holds 0; after 64 misses one of the listed zero
    cells) or from the layers whose mode can change what they compute (``mode``, :func:`mode_matters`). An
    operator that finds no site (a model without nonzero weights, or without taps beyond lag 0) falls back to the next one.
    ``nonzero`` may pass :func:`weight_sites` ``(model)`` precomputed (it is the same for every seed),
    as a list or tuple: a set would be drawn from in hash order, which differs between processes.
    ``symbol``, the parameter ``sym`` writes, must be a parameter name whatever operator the seed
    draws (:class:`UsageError` otherwise).
    """
    _expect(model, Model, "weight_mutant")
    if not model.layers:
        raise UsageError("weight_mutant: the model has no layers to mutate")
    operators = _operators(operators, WEIGHT_OPERATORS, "weight_mutant")
    _symbol(symbol, "weight_mutant")
    rng = _rng("weight", seed)
    if nonzero is not None and (isinstance(nonzero, str) or not isinstance(nonzero, (list, tuple))):
        raise UsageError(f"weight_mutant: nonzero: expected None or the list weight_sites(model) (WeightSites), found "
                         f"{type(nonzero).__name__} {safe_repr(nonzero, 40)}")
    sites = weight_sites(model) if nonzero is None else list(nonzero)
    first = rng.randrange(len(operators))
    for op in (operators[(first + t) % len(operators)] for t in range(len(operators))):
        if op == "mode":
            flippable = [k for k, layer in enumerate(model.layers) if mode_matters(layer)]
            if not flippable:
                continue
            k = rng.choice(flippable)
            old = model.layers[k].mode.value
            return Mutation(flip_mode(model, k), op, f"layer {k} mode {old}")
        site = _random_zero_site(model, rng) if op == "one" else (rng.choice(sites) if sites else None)
        if site is None:
            continue
        before = get_weight(model, site)
        if op != "one" and is_zero(before):  # only a precomputed list can name a zero cell
            raise UsageError(f"weight_mutant: nonzero: {site} holds 0 in this model; pass weight_sites(model), "
                             "the nonzero cells of this model")
        if op == "sym" and before == sym(symbol):
            continue
        new = mutate_weight(model, site, op, symbol=symbol if op == "sym" else None)
        return Mutation(new, op, f"{site}: {show_scalar(before)} → {show_scalar(get_weight(new, site))}")
    raise UsageError(f"weight_mutant: none of the operators {list(operators)} applies to this model")


# ---- single-gate mutants of a Circuit ------------------------------------------------------------

#: Operator name → what it does to the chosen gate (or outputs).
GATE_OPERATORS: dict[str, str] = {
    "op": "MUL a·b → LIN 1·a + 1·b, and LIN α·a + β·b → MUL a·b (a non-constant gate)",
    "coeff": "one coefficient c → c + 1 (a LIN coefficient or a CONST value)",
    "coeff_sym": "one coefficient c → the symbolic coefficient sym(symbol)",
    "coeff_p": "one coefficient c → c + (2^61 − 1): invisible modulo that prime",
    "rewire": "one operand of a LIN or MUL gate (not a LIN operand with coefficient 0) → another node defined before the gate",
    "outputs": "swap two outputs that name different nodes",
}
DEFAULT_GATE_OPERATORS = ("op", "coeff", "rewire", "outputs")


def _replace_gate(c: Circuit, k: int, gate: Gate) -> Circuit:
    gates = (*c.gates[:k], gate, *c.gates[k + 1 :])
    return Circuit(c.n, c.d, gates, c.outputs, c.name)


def mutate_gate(circuit: Circuit, k: int, op: str, *, which: int | None = None, to: int | None = None,
                symbol: str | None = None) -> Circuit:
    """Apply gate operator ``op`` (a key of :data:`GATE_OPERATORS` other than ``outputs``) to gate ``k``.

    ``op`` turns a MUL into ``LIN 1·a + 1·b`` and a LIN into ``MUL a·b`` (same operands);
    ``coeff``/``coeff_sym``/``coeff_p`` change coefficient ``which`` (0: α or the constant, 1: β) to
    ``c + 1``, ``sym(symbol)`` or ``c + 2^61 − 1``; ``rewire`` points operand ``which`` at node ``to``
    (which must be an earlier node other than the current one). Raises :class:`UsageError` where the
    operator does not apply (``op`` or ``rewire`` on a CONST, ``rewire`` of a LIN operand whose
    coefficient is 0, which leaves the gate's value as it is, ``coeff`` on a MUL), or ``to`` is
    given to an operator other than ``rewire``, ``which`` (default 0) to ``op``, or ``symbol``
    (default ``"m"``) to an operator other than ``coeff_sym``: each is read by those operators only.
    """
    _expect(circuit, Circuit, "mutate_gate")
    if which is not None and op == "op":
        raise UsageError(f"mutate_gate: which={safe_repr(which, 40)} picks the coefficient or operand of the other "
                         "operators; found operator 'op', which changes the whole gate")
    if symbol is not None and op != "coeff_sym":
        raise UsageError(f"mutate_gate: symbol={safe_repr(symbol, 40)} is the parameter of operator 'coeff_sym' only; "
                         f"found operator {safe_repr(op, 40)}")
    which = _int(0 if which is None else which, "mutate_gate: which")
    symbol = "m" if symbol is None else _symbol(symbol, "mutate_gate")
    if not 0 <= _int(k, "mutate_gate: gate k") < len(circuit.gates):
        raise UsageError(f"mutate_gate: the circuit has {len(circuit.gates)} gates, found gate {k}")
    g = circuit.gates[k]
    if to is not None and op != "rewire":
        raise UsageError(f"mutate_gate: to={to!r} is the new node of operator 'rewire' only; found operator {op!r}")
    if op == "op":
        if g.op is Op.MUL:
            return _replace_gate(circuit, k, Gate.lin(g.args[0], 1, g.args[1], 1))
        if g.op is Op.LIN:
            return _replace_gate(circuit, k, Gate.mul(g.args[0], g.args[1]))
        raise UsageError("gate operator 'op' needs a LIN or MUL gate, found a CONST")
    if op in ("coeff", "coeff_sym", "coeff_p"):
        if not 0 <= which < len(g.coeffs):
            raise UsageError(f"gate operator {op!r}: gate {k} ({g.op.value}) has {len(g.coeffs)} coefficients, found which={which}")
        old = g.coeffs[which]
        new: Scalar = old + 1 if op == "coeff" else (sym(symbol) if op == "coeff_sym" else old + M61)
        if new == old:
            raise UsageError(f"gate operator {op!r}: coefficient {which} of gate {k} already is {show_scalar(old)}")
        coeffs = tuple(new if t == which else x for t, x in enumerate(g.coeffs))
        return _replace_gate(circuit, k, Gate(g.op, g.args, coeffs))
    if op == "rewire":
        if g.op is Op.CONST:
            raise UsageError("gate operator 'rewire' needs a LIN or MUL gate, found a CONST")
        if which not in (0, 1) or to is None or to == g.args[which]:
            raise UsageError(f"gate operator 'rewire': expected which ∈ {{0, 1}} and a new node `to`, found which={which}, to={to}")
        if g.op is Op.LIN and is_zero(g.coeffs[which]):
            raise UsageError(f"gate operator 'rewire': expected an operand with a nonzero coefficient, found operand {which} of "
                             f"gate {k} ({g}) with coefficient 0: the gate would compute what it computes now")
        args = tuple(to if t == which else a for t, a in enumerate(g.args))
        return _replace_gate(circuit, k, Gate(g.op, args, g.coeffs))
    raise UsageError(f"mutate_gate: expected an operator among {', '.join(o for o in GATE_OPERATORS if o != 'outputs')}, found {op!r}")


def _rewirable(g: Gate) -> list[int]:
    """The operands of ``g`` whose node the gate's value depends on: both of a MUL, those of a LIN
    with a nonzero coefficient (rewiring ``0·a`` changes nothing)."""
    return [w for w in range(len(g.args)) if g.op is Op.MUL or not is_zero(g.coeffs[w])]


def swap_outputs(circuit: Circuit, i: int, j: int) -> Circuit:
    """A copy of ``circuit`` with outputs ``i`` and ``j`` exchanged. Positions naming the same node
    (``i == j`` included) are a :class:`UsageError`: the exchange would change nothing, and a mutant
    is one change."""
    _expect(circuit, Circuit, "swap_outputs")
    outs = list(circuit.outputs)
    i, j = (_index(x, len(outs), f"swap_outputs: output position {x!r}") for x in (i, j))
    if outs[i] == outs[j]:
        raise UsageError(f"swap_outputs: expected two output positions naming different nodes, found positions {i} and {j}, "
                         f"both %{outs[i]} (the exchange would change nothing)")
    outs[i], outs[j] = outs[j], outs[i]
    return Circuit(circuit.n, circuit.d, circuit.gates, tuple(outs), circuit.name)


def gate_mutant(circuit: Circuit, seed: int, operators: Sequence[str] = DEFAULT_GATE_OPERATORS, *,
                symbol: str = "m", live: bool = True) -> Mutation:
    """A single-gate mutant of ``circuit``, chosen by ``seed``.

    The operator is drawn uniformly from ``operators``, then a gate it applies to (and, for
    ``coeff``/``rewire``, which coefficient or operand and the new node; for ``outputs`` two output
    positions naming different nodes). With ``live`` (the default) only gates some output depends
    on are candidates: a dead gate's mutant computes what the circuit computes, so no check can
    tell it from the original; ``live=False`` draws every gate (structural tests). An operator with nothing to act on
    falls back to the next. ``symbol``, the parameter ``coeff_sym`` writes, must be a parameter name
    whatever operator the seed draws (:class:`UsageError` otherwise).
    """
    _expect(circuit, Circuit, "gate_mutant")
    _flag(live, "gate_mutant: live")
    operators = _operators(operators, GATE_OPERATORS, "gate_mutant")
    _symbol(symbol, "gate_mutant")
    rng = _rng("gate", seed)
    nd = circuit.num_inputs
    if live:
        from symverify.kernel.ir.analysis import needed_nodes

        alive = needed_nodes(circuit)
    first = rng.randrange(len(operators))
    for op in (operators[(first + t) % len(operators)] for t in range(len(operators))):
        if op == "outputs":
            pairs = [(i, j) for i in range(len(circuit.outputs)) for j in range(i + 1, len(circuit.outputs))
                     if circuit.outputs[i] != circuit.outputs[j]]
            if not pairs:
                continue
            i, j = rng.choice(pairs)
            return Mutation(swap_outputs(circuit, i, j), op, f"outputs {i} ↔ {j} (%{circuit.outputs[i]} ↔ %{circuit.outputs[j]})")
        if op in ("op", "rewire"):
            ks = [k for k, g in enumerate(circuit.gates) if g.op is not Op.CONST
                  and (op == "op" or (nd + k > 1 and _rewirable(g)))]
        elif op == "coeff_sym":
            ks = [k for k, g in enumerate(circuit.gates) if g.coeffs and any(x != sym(symbol) for x in g.coeffs)]
        else:
            ks = [k for k, g in enumerate(circuit.gates) if g.coeffs]
        if live:
            ks = [k for k in ks if nd + k in alive]
        if not ks:
            continue
        k = rng.choice(ks)
        g = circuit.gates[k]
        where = f"gate {k} (%{nd + k} = {g})"
        if op == "rewire":
            operands = _rewirable(g)
            which = operands[rng.randrange(len(operands))]
            to = rng.choice([v for v in range(nd + k) if v != g.args[which]])
            new = mutate_gate(circuit, k, op, which=which, to=to)
            return Mutation(new, op, f"{where}: operand {which} %{g.args[which]} → %{to}")
        if op == "op":
            return Mutation(mutate_gate(circuit, k, op), op, f"{where} → {mutate_gate(circuit, k, op).gates[k]}")
        choices = [t for t, x in enumerate(g.coeffs) if op != "coeff_sym" or x != sym(symbol)]
        which = rng.choice(choices)
        new = mutate_gate(circuit, k, op, which=which, symbol=symbol if op == "coeff_sym" else None)
        return Mutation(new, op, f"{where} → {new.gates[k]}")
    raise UsageError(f"gate_mutant: none of the operators {list(operators)} applies to this circuit")


# ---- certificate mutants ------------------------------------------------------------------------

#: Operator name → what it does to the chosen cell of the chosen boundary.
CERTIFICATE_OPERATORS: dict[str, str] = {
    "node": "one term's node → another node of the circuit (a term with a nonzero coefficient)",
    "coeff": "one term's coefficient c → c + 1",
    "const": "the cell's constant c → c + 1",
    "drop": "remove a cell claiming a nonzero value (the certificate then claims it holds 0)",
}


def mutate_cell(cert: Certificate, boundary: int, cell: int, op: str, *, term: int = 0, to: int | None = None) -> Certificate:
    """Apply certificate operator ``op`` to cell ``cell`` of boundary ``boundary``.

    ``node`` replaces term ``term``'s node by ``to``; ``coeff`` adds 1 to term ``term``'s
    coefficient; ``const`` adds 1 to the constant; ``drop`` removes the cell (``to`` with another
    operator than ``node`` is a :class:`UsageError`). A change that leaves the cell's claim as it is
    (``node`` on a term whose coefficient is 0, ``drop`` of a cell claiming 0) is a :class:`UsageError`. The result is a valid
    :class:`Certificate` object; whether it still fits its circuit and model (its first and last
    boundary are fixed by the rules) is for the checker to say.
    """
    _expect(cert, Certificate, "mutate_cell")
    _int(term, "mutate_cell: term")
    _int(cell, "mutate_cell: cell")
    if not 0 <= _int(boundary, "mutate_cell: boundary") < len(cert.boundaries):
        raise UsageError(f"mutate_cell: the certificate has {len(cert.boundaries)} boundaries, found {boundary}")
    b = cert.boundaries[boundary]
    if not 0 <= cell < len(b.cells):
        raise UsageError(f"mutate_cell: boundary {boundary} lists {len(b.cells)} cells, found cell {cell}")
    c = b.cells[cell]
    if to is not None and op != "node":
        raise UsageError(f"mutate_cell: to={to!r} is the new node of operator 'node' only; found operator {op!r}")
    new: Cell | None
    if op == "drop":
        if not c.form():
            raise UsageError(f"certificate operator 'drop': expected a cell claiming a nonzero value, found cell {cell} "
                             f"({c.row}, {c.col}) of boundary {boundary} claiming 0: an unlisted cell is claimed 0 too, "
                             "so the certificate would claim what it claims now")
        new = None
    elif op == "const":
        new = Cell(c.row, c.col, c.terms, c.const + 1)
    elif op in ("node", "coeff"):
        if not 0 <= term < len(c.terms):
            raise UsageError(f"certificate operator {op!r}: the cell has {len(c.terms)} terms, found term {term}")
        v, co = c.terms[term]
        if op == "node":
            if to is None or to == v:
                raise UsageError(f"certificate operator 'node': expected a new node `to`, found {to}")
            if is_zero(co):
                raise UsageError(f"certificate operator 'node': expected a term with a nonzero coefficient, found term "
                                 f"{term} (%{v}) of cell ({c.row}, {c.col}) with coefficient 0: the cell would claim "
                                 "what it claims now")
            entry: tuple[int, Scalar] = (to, co)
        else:
            entry = (v, co + 1)
        new = Cell(c.row, c.col, tuple(entry if t == term else x for t, x in enumerate(c.terms)), c.const)
    else:
        raise UsageError(f"mutate_cell: expected an operator among {', '.join(CERTIFICATE_OPERATORS)}, found {op!r}")
    cells = tuple(x for t, x in enumerate(b.cells) if t != cell) if new is None else tuple(
        new if t == cell else x for t, x in enumerate(b.cells))
    bounds = (*cert.boundaries[:boundary], Boundary(b.layer, cells, b.label), *cert.boundaries[boundary + 1 :])
    return Certificate(bounds, cert.meta)


def certificate_mutant(cert: Certificate, num_nodes: int, seed: int,
                       operators: Sequence[str] = tuple(CERTIFICATE_OPERATORS), *, interior: bool = True) -> Mutation:
    """A single-cell mutant of ``cert``, chosen by ``seed``; ``num_nodes`` is the circuit's node count.

    With ``interior`` (the default) only boundaries strictly between the first and the last are
    touched, so the mutant still passes the structural rules and the checker has to find the lie
    by running the layers; otherwise any boundary may be picked. Where ``node``, ``coeff`` or
    ``drop`` does not apply to the drawn cell, or would leave its claim as it is (no terms; for
    ``node`` no term with a nonzero coefficient, or one node; for ``drop`` a cell claiming 0, as an
    unlisted one is), the mutant is ``const`` when ``const`` is among ``operators``; otherwise only
    cells it applies to are drawn, and ``node`` with one node is a :class:`UsageError`.
    """
    _expect(cert, Certificate, "certificate_mutant")
    _flag(interior, "certificate_mutant: interior")
    if _int(num_nodes, "certificate_mutant: num_nodes") < 1:
        raise UsageError(f"certificate_mutant: num_nodes (the circuit's node count) must be positive, found {num_nodes}")
    operators = _operators(operators, CERTIFICATE_OPERATORS, "certificate_mutant")
    rng = _rng("certificate", seed)
    lo, hi = (1, len(cert.boundaries) - 1) if interior else (0, len(cert.boundaries))
    spots = [(k, t) for k in range(lo, hi) for t in range(len(cert.boundaries[k].cells))]
    if not spots:
        raise UsageError("certificate_mutant: no boundary with cells to mutate" + (" (interior only)" if interior else ""))
    op = rng.choice(list(operators))
    if op in ("node", "coeff", "drop") and "const" not in operators:  # no fallback to an operator not asked for
        if op == "node" and num_nodes < 2:
            raise UsageError("certificate_mutant: operator 'node' needs a circuit of at least 2 nodes, found num_nodes=1")
        spots = [(k, t) for (k, t) in spots if _applies(op, cert.boundaries[k].cells[t])]
        if not spots:
            need = {"node": "a term with a nonzero coefficient", "coeff": "terms", "drop": "a nonzero claim"}[op]
            raise UsageError(f"certificate_mutant: operator {op!r} needs a cell with {need}; no boundary lists one"
                             + (" (interior only)" if interior else ""))
    k, t = rng.choice(spots)
    c = cert.boundaries[k].cells[t]
    where = f"boundary {k} (layer {cert.boundaries[k].layer}) cell ({c.row}, {c.col})"
    if op != "const" and not _applies(op, c):
        op = "const"
    if op == "node":
        live = [i for i, (_, co) in enumerate(c.terms) if not is_zero(co)]
        term = live[rng.randrange(len(live))]
        v = c.terms[term][0]
        to = rng.choice([x for x in range(num_nodes) if x != v]) if num_nodes > 1 else v
        if to == v:
            op = "const"
        else:
            return Mutation(mutate_cell(cert, k, t, op, term=term, to=to), op, f"{where}: %{v} → %{to}")
    if op == "coeff":
        term = rng.randrange(len(c.terms))
        return Mutation(mutate_cell(cert, k, t, op, term=term), op, f"{where}: coefficient of %{c.terms[term][0]} + 1")
    return Mutation(mutate_cell(cert, k, t, op), op, f"{where}: {'dropped' if op == 'drop' else 'constant + 1'}")


def _applies(op: str, cell: Cell) -> bool:
    """Whether certificate operator ``op`` changes what ``cell`` claims: ``node`` needs a term with a
    nonzero coefficient (moving ``0·v`` changes nothing), ``coeff`` a term, ``drop`` a cell claiming
    a nonzero value (an unlisted cell is claimed 0); ``const`` always applies."""
    if op == "node":
        return any(not is_zero(co) for _, co in cell.terms)
    if op == "coeff":
        return bool(cell.terms)
    if op == "drop":
        return bool(cell.form())
    return True


MAX_MUTANTS = 100_000
"""The most mutants one :func:`mutants` call builds: a larger ``count`` is refused up front (it would try
up to ``4·count + 16`` seeds, without end in practice); run several campaigns with other seeds instead."""


def _content_key(obj: object, where: str) -> object:
    """What two mutants must share to be the same mutant: the content digest of a circuit, model or
    kaleidoscope (:func:`~symverify.kernel.provers.fingerprint.content_digest`), a certificate
    itself (a frozen dataclass, equal by its boundaries and meta). Another object, a subclass of
    these included (it has no content digest), raises :class:`UsageError`: :func:`mutants` could
    not tell two of them apart."""
    from symverify.kernel.ir.butterfly import Kaleidoscope
    from symverify.kernel.provers.fingerprint import content_digest

    if type(obj) in (Circuit, Model, Kaleidoscope):
        return (type(obj).__name__, content_digest(obj))  # type: ignore[arg-type]
    if type(obj) is Certificate:
        return ("Certificate", obj)
    raise UsageError(f"{where}: expected a Mutation whose obj is a Circuit, Model, Kaleidoscope or Certificate, "
                     f"found {type(obj).__name__}")


def mutants(make: Callable[[int], Mutation], count: int, seed: int = 0, *, fewer: bool = False) -> list[Mutation]:
    """``count`` *distinct* mutants from ``make(seed), make(seed + 1), …`` (for example
    ``mutants(lambda s: weight_mutant(model, s), 100)``): a mutant whose object has the content of an
    earlier one (the same content digest for a circuit, model or kaleidoscope; an equal certificate)
    is skipped, whatever operator or site made it, and so are seeds that raise :class:`UsageError`,
    up to ``4·count + 16`` seeds in all. Fewer than ``count`` distinct mutants (none at all included)
    raise :class:`UsageError` saying how many were found and how many seeds repeated one: a small
    object has few mutants (a one-gate circuit has 3 under the default gate operators), and a
    campaign never runs the same mutant twice, nor on fewer mutants than it asked for, without
    saying so. With ``fewer=True`` the distinct mutants found are returned instead, however few
    (at most ``count``; none when every seed was refused): for a loop over all the mutants of a
    small object. ``count`` is at most :data:`MAX_MUTANTS`; a larger one raises :class:`UsageError`
    before any seed is tried."""
    if not callable(make):
        raise UsageError(f"mutants: make: expected a function of the seed returning a Mutation, found {safe_repr(make, 60)}")
    if _int(count, "mutants: count") < 0:
        raise UsageError(f"mutants: count must be ≥ 0, found {count}")
    if count > MAX_MUTANTS:
        raise UsageError(f"mutants: count: expected at most MAX_MUTANTS = {MAX_MUTANTS} mutants in one call, found {count}; "
                         f"run several campaigns with different seeds instead")
    _flag(fewer, "mutants: fewer")
    out: list[Mutation] = []
    seen: set[object] = set()
    repeats = 0
    s = _int(seed, "mutants: seed")
    last: UsageError | None = None
    while len(out) < count and s < seed + 4 * count + 16:
        try:
            m = make(s)
        except UsageError as e:
            last = e
        else:
            if not isinstance(m, Mutation):
                raise UsageError(f"mutants: make({s}): expected a Mutation (from weight_mutant, gate_mutant or "
                                 f"certificate_mutant), found {type(m).__name__}")
            key = _content_key(m.obj, f"mutants: make({s})")
            if key in seen:
                repeats += 1
            else:
                seen.add(key)
                out.append(m)
        s += 1
    if fewer:
        return out
    if not out and last is not None:
        raise UsageError(f"mutants: no seed from {seed} to {s - 1} gave a mutant; the last said: {last}")
    if len(out) < count:
        raise UsageError(f"mutants: seeds {seed} to {s - 1} gave {len(out)} distinct mutants of the {count} asked for "
                         f"({repeats} seeds repeated an earlier mutant"
                         + (f"; the last refusal said: {last})" if last is not None else ")"))
    return out
