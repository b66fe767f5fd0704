"""The ``symverify`` command line.

``symverify verify A.json B.json [--method M] [--certificate CERT.json] [--json]`` exits 0 when
proved, 1 when refuted, 2 when unknown and 3 on a usage or input error; ``symverify info FILE``
prints the statistics of a circuit, model or certificate (``--compile METHOD`` adds a compiled
model's resources against its stated bounds); ``symverify compile CIRCUIT.json [-o MODEL.json]
[--certificate CERT.json]`` writes a compiled model (to standard output without ``-o``) and its certificate; ``symverify prove [NAME ...|all]``
(``--list``: the scripts and their titles) runs proof scripts (:mod:`symverify.scripts.runner`; on a Dask cluster with ``--scheduler``,
:mod:`symverify.scripts.dask_backend`) and exits 0 only when every instance is proved within
its stated bounds (argued claims aside: they must only not have failed their checks); ``symverify sweep thm_h21 --widths … --depths … --seeds …`` runs a sweep
script on that grid and writes the same run JSON. An option is given at most once (``--dir`` may repeat):
a second value is refused, never silently kept over the first. Every :class:`~symverify.errors.SymverifyError` is one line on stderr,
``symverify: error: ...``, with exit code 3 and no traceback. So is anything else that goes
wrong (an exhausted memory, a bug: ``symverify: error: internal error ...``); set the environment
variable ``SYMVERIFY_TRACEBACK=1`` to see the traceback of an internal error instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from symverify.errors import SymverifyError

__all__ = ["main", "EXIT_PROVED", "EXIT_REFUTED", "EXIT_UNKNOWN", "EXIT_ERROR"]

EXIT_PROVED, EXIT_REFUTED, EXIT_UNKNOWN, EXIT_ERROR = 0, 1, 2, 3

ENV_STRING_MAX = 131072
"""The longest ``NAME=VALUE`` string of a process's environment Linux accepts (``MAX_ARG_STRLEN``, 32 pages):
``symverify sweep`` refuses a grid whose JSON would not fit in :data:`~symverify.scripts.protocol.SWEEP_ENV`."""

MAX_JOBS = 1024
"""The most processes (or local Dask workers) ``prove``/``sweep -j`` starts at once; a huge ``-j``
built that many shards of a shardable script before running any."""


EPILOG = """\
exit codes:
  0    proved (verify); every script ok (prove, sweep); done (info, compile, report)
  1    refuted (verify); a script failed, or the run differs from --golden (prove, sweep)
  2    unknown: neither proved nor refuted within the budget (verify)
  3    usage or input error (one line on stderr, no traceback)
  130  interrupted (Ctrl-C or SIGTERM)

file formats (circuit, model and certificate JSON, the proof-run JSON of --json, golden files):
  docs/formats.md in the symverify repository
"""


class _Once(argparse.Action):
    """An option that may be given once: argparse keeps the last of two values without a word
    (``--method exact --method randomized`` ran randomized), so a second one is a usage error
    naming both. Repeatable options (``--dir``) append and are not of this kind."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given: dict[str, str] = namespace.__dict__.setdefault("_given", {})
        shown = repr(values) if self.nargs != 0 else str(option_string)
        if self.dest in given:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice ({given[self.dest]}, then {shown}); "
                         "give it once")
        given[self.dest] = shown
        super().__call__(parser, namespace, values, option_string)  # type: ignore[misc]


class _OnceStore(_Once, argparse._StoreAction):
    pass


class _OnceStoreTrue(_Once, argparse._StoreTrueAction):
    pass


class _OnceBoolean(_Once, argparse.BooleanOptionalAction):
    pass


class _Version(argparse.Action):
    """``--version``: prints the version and exits 0, and takes no other argument: argparse's own
    action exited at ``--version`` and ignored the rest (``symverify --version extra`` printed the
    version), so anything else on the command line is a usage error naming it. The command line
    is the one :func:`_main` parses (``parser.argv``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, version: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.version = version

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        rest = list(getattr(parser, "argv", ()))
        # the token that named it: argparse hands over the full option string for an abbreviation (--vers)
        at = next((i for i, a in enumerate(rest) if len(a) > 2 and "--version".startswith(a)), None)
        if at is not None:
            del rest[at]
        if rest:
            parser.error(f"argument --version: expected no other arguments, found {' '.join(map(_line, rest))}")
        parser._print_message(f"{self.version}\n", sys.stdout)  # on stdout, as argparse's own action
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _OnceStore)  # every option given once (_Once)
        self.register("action", "store", _OnceStore)
        self.register("action", "store_true", _OnceStoreTrue)

    def error(self, message: str) -> NoReturn:
        """A bad flag or argument: one line on stderr (the exit-code table's promise), pointing at ``--help``."""
        self.exit(EXIT_ERROR, f"symverify: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    from symverify._version import __version__
    from symverify.ir import limits
    from symverify.kernel.provers.options import DEFAULT_ERROR_BOUND, METHODS

    ap = _Parser(prog="symverify", description="Prove BaseConv models equal to arithmetic circuits.", epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_Version, version=f"symverify {__version__}",
                    help="print the version and exit (no other argument)")
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)  # a missing command: _main says what it found
    sub.add_parser = _with_epilog(sub.add_parser)  # type: ignore[method-assign]
    v = sub.add_parser("verify", help="decide whether two circuits/models compute the same polynomials")
    v.add_argument("lhs", metavar="A.json", help="a circuit or model file (JSON; docs/formats.md)")
    v.add_argument("rhs", metavar="B.json", help="the other side: a circuit or model file")
    v.add_argument("--method", choices=METHODS, default="auto",
                   help="how to decide: auto (the default) checks the certificate when there is one, else runs a "
                        "one-trial randomized pre-check, then exact on small sides, else randomized; "
                        f"one of {', '.join(METHODS)}")
    v.add_argument("--certificate", metavar="CERT.json",
                   help="a stage certificate for the model side of a circuit and a model (checked by methods auto and compositional)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--seed", type=_seed, default=0, metavar="S|fresh",
                   help="seed of every random choice, read by every method: the randomized points and the "
                        "counterexample candidates a refutation is searched among (default 0: reproducible Fiat–Shamir "
                        "points derived from both sides); 'fresh' draws operating-system randomness, recorded in the report")
    v.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="give up after this many seconds (verdict unknown, exit 2; default: no limit)")
    v.add_argument("--trials", type=_integer, default=None, metavar="K",
                   help=f"run at least K randomized trials (default: as many as the error bound "
                        f"2^-{DEFAULT_ERROR_BOUND.denominator.bit_length() - 1} needs; K only adds to those); "
                        f"at most symverify.ir.limits.MAX_TRIALS = {limits.MAX_TRIALS}")
    v.add_argument("--backend", choices=("flint", "sympy", "torch", "python"), default=None,
                   help="exact engine (flint, sympy) or randomized engine (torch, python)")
    v.add_argument("--progress", action=_OnceBoolean, default=None,
                   help="show a spinner with the elapsed time on stderr (default: when stderr is a terminal)")
    v.add_argument("--numeric", nargs="?", const="float64", default=None, metavar="DTYPE", choices=("float64", "float32", "bfloat16"),
                   help="also cross-check the float executor (float64, float32, bfloat16); never changes the verdict")
    v.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the compositional stage checks on a Dask cluster: a scheduler's address "
                        "(tcp://HOST:8786) or file (FILE.json), or 'local' (needs symverify[dask])")
    i = sub.add_parser("info", help="print the statistics of a circuit, model or certificate file")
    i.add_argument("file", metavar="FILE", help="a circuit, model or certificate file (JSON; docs/formats.md)")
    i.add_argument("--json", action="store_true", help="print the statistics as JSON")
    i.add_argument("--compile", choices=("dense", "kaleidoscope"), metavar="METHOD",
                   help="for a circuit: also compile it (dense or kaleidoscope) and show the resources vs stated bounds")
    c = sub.add_parser("compile", help="compile a circuit into a BaseConv model with its stage certificate")
    c.add_argument("circuit", metavar="CIRCUIT.json", help="the circuit file (JSON; docs/formats.md)")
    c.add_argument("--method", choices=("dense", "kaleidoscope"), default="kaleidoscope",
                   help="kaleidoscope (Theorem H.21, the default) or dense (the baseline)")
    c.add_argument("-o", "--output", metavar="MODEL.json", default=None,
                   help="where to write the model (default: standard output, with the summary on standard error)")
    c.add_argument("--certificate", metavar="CERT.json", help="where to write the stage certificate")
    c.add_argument("--json", action="store_true", help="print the resources as JSON")
    c.add_argument("--progress", action=_OnceBoolean, default=None,
                   help="show a spinner with the elapsed time on stderr (default: when stderr is a terminal)")
    c.add_argument("--plan", choices=("auto", "exact", "greedy"), default="auto",
                   help="kaleidoscope: choose the state layouts for the fewest layers in all among those offered "
                        "(exact), stage by stage by estimates (greedy, faster on wide or deep circuits) or exact while "
                        "N_k·(depth+1) ≤ 768, e.g. w ≤ 16 up to depth 11 (auto, the default)")
    p = sub.add_parser("prove", help="run proof scripts (the built-in ones, and --dir DIR's)")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="script names, paths DIR/NAME.py of your own scripts (as --dir DIR NAME), or 'all' "
                        "(default: every built-in script, or every script of --dir)")
    p.add_argument("--quick", action="store_true", help="the small tier")
    p.add_argument("--list", action="store_true",
                   help="list the scripts (name, where from, title) and exit; reads only --dir and the names")
    _run_options(p)
    w = sub.add_parser("sweep", help="run a sweep script on a parameter grid (thm_h21: widths × depths × seeds × compilers)")
    w.add_argument("family", metavar="NAME", help="the sweep: thm_h21 (or a sweep script's name, SWEEP = True)")
    w.add_argument("--widths", metavar="LIST", help="cut widths w, e.g. 64,256,1024 (default: the script's grid)")
    w.add_argument("--depths", metavar="LIST", help="depths Δ, e.g. 8,16,32")
    w.add_argument("--seeds", metavar="LIST", help="seeds, e.g. 0-9")
    w.add_argument("--compilers", metavar="LIST", help="kaleidoscope and/or dense, e.g. kaleidoscope,dense")
    _run_options(w)
    r = sub.add_parser("report", help="write a `prove --json` run as one self-contained HTML page")
    r.add_argument("run", metavar="RUN.json", help="a run written by `symverify prove --json`")
    r.add_argument("-o", "--output", metavar="PATH", default="report.html", help="where to write the page (default report.html)")
    return ap


def _with_epilog(add_parser: Any) -> Any:
    """``add_parser`` giving every subcommand the exit codes and the formats link in its ``--help``."""

    def add(name: str, **kw: Any) -> Any:
        kw.setdefault("epilog", EPILOG)
        kw.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        return add_parser(name, **kw)

    return add


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _shown(text: str) -> str:
    """An option's value for a message: as written, or by its length when long."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text)} characters)"


def _integer(text: str, alternative: str = "") -> int:
    """An integer option (``--trials``, ``--seed``, ``-j``, ``--cases-per-task``): ASCII digits
    0-9 with an optional sign. ``int()`` also reads ``1_0`` as 10, ``١٢`` (Arabic-Indic digits) as
    12 and `` 5 `` as 5; such a value is refused, never read as another number. ``alternative``
    names what else the option takes (``" or 'fresh'"``)."""
    if not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected an integer (digits 0-9, an optional sign){alternative}, "
                                         f"found {_shown(text)}")
    try:
        return int(text)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        raise argparse.ArgumentTypeError(f"expected an integer (digits 0-9) of at most {sys.get_int_max_str_digits()} "
                                         f"digits, found one of {len(text.lstrip('+-'))} digits") from None


def _seed(text: str) -> int | None:
    """``--seed``: an integer (:func:`_integer`), or ``fresh`` for operating-system randomness (``verify(seed=None)``)."""
    if text == "fresh":
        return None
    return _integer(text, " or 'fresh'")


def _seconds(text: str) -> float:
    """``--timeout``: a positive, finite number of seconds written with ASCII digits (``30``,
    ``2.5``, ``1e3``; ``float()`` also reads ``1_0``, ``١`` and padded text, which are refused);
    NaN, ``inf``, 0, negatives and values that round to 0 or overflow (``1e-400``, ``1e400``) are refused."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or (math.isfinite(value) and not _DECIMAL.fullmatch(text)):
        raise argparse.ArgumentTypeError(f"expected a number of seconds such as 30, 2.5 or 1e3 (digits 0-9), "
                                         f"found {_shown(text)}")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive, finite number of seconds (leave --timeout out for no "
                                         f"limit), found {_shown(text)}")
    return value


def _run_options(p: argparse.ArgumentParser) -> None:
    """The options that ``prove`` and ``sweep`` share: where to run, and what to write."""
    p.add_argument("-j", "--jobs", type=_integer, default=None, metavar="N",
                   help="processes at once, or local Dask workers with --scheduler local (default: the machine's cores; "
                        "refused with another --scheduler, whose workers are its own); results do not depend on it")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster: a scheduler's address (tcp://HOST:8786) or file (FILE.json), or 'local' "
                        "for a local cluster of -j workers (needs symverify[dask])")
    p.add_argument("--cases-per-task", type=_integer, default=None, metavar="C",
                   help="with --scheduler: cases of a shardable script per task (others run as one task, named in a warning; "
                        "default: automatic, about two "
                        "tasks per worker thread)")
    p.add_argument("--json", metavar="OUT", help="write the run as stable JSON to OUT ('-': standard output; never a file the run reads)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per instance) to FILE ('-': standard output; never a file "
                        "the run reads)")
    p.add_argument("--golden", metavar="RUN.json", help="fail unless verdicts, kinds, methods, resources, bounds, checks, error bounds and "
                        "digests match a stored run (docs/formats.md, Golden files)")
    p.add_argument("--update-golden", action="store_true",
                   help="with --golden: write this run there instead of comparing (only when it is ok; named "
                        "scripts replace only their part of a stored run of the same tier and version)")
    p.add_argument("--timings", action="store_true", help="keep times (rounded to 0.1 s) in the JSON")
    p.add_argument("--dir", metavar="DIR", action="append", default=[], help="add the scripts DIR/NAME.py (repeatable)")
    p.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS", help="time limit per script process")
    p.add_argument("--details", action="store_true", help="also print every instance with its resources / bounds")
    p.add_argument("--wide", action="store_true", help="a wider table: titles, and every resource over its bound instead of the first")


def _load(path: str) -> Any:
    """The document in ``path``; every problem with the file is a ``SerializationError``."""
    from symverify.ir.serialize import load_file

    return load_file(path)


def _cmd_verify(args: argparse.Namespace) -> int:
    from symverify.errors import IRError
    from symverify.kernel.ir.baseconv import Model
    from symverify.kernel.ir.certificate import Certificate
    from symverify.kernel.provers.outcome import UsageError, Verdict
    from symverify.kernel.verification import verify

    _check_verify_flags(args)
    lhs, rhs = _load(args.lhs), _load(args.rhs)
    for name, obj in ((args.lhs, lhs), (args.rhs, rhs)):
        if isinstance(obj, Certificate):
            raise UsageError(f"{name} is a certificate; pass it with --certificate and give two circuits/models")
    cert = None
    if args.certificate:
        cert = _load(args.certificate)
        if not isinstance(cert, Certificate):
            raise UsageError(f"--certificate {args.certificate}: expected a certificate file, found a {type(cert).__name__}")
        if not any(isinstance(obj, Model) for obj in (lhs, rhs)):
            raise UsageError(f"--certificate {args.certificate}: a stage certificate belongs to a model, but neither "
                             f"{args.lhs} ({type(lhs).__name__}) nor {args.rhs} ({type(rhs).__name__}) is a model")
        if isinstance(lhs, Model) and isinstance(rhs, Model):  # auto would compare them without reading it
            raise UsageError(f"--certificate {args.certificate}: a stage certificate places a circuit's values in a model, "
                             f"so one side must be the circuit; found two models, {args.lhs} and {args.rhs}")
    if args.method == "compositional" and cert is None:
        raise UsageError("--method compositional checks a stage certificate: pass --certificate CERT.json "
                         "(symverify compile CIRCUIT.json -o MODEL.json --certificate CERT.json writes one)")
    from symverify.progress import activity

    with activity(f"verifying {args.lhs} against {args.rhs} (method {args.method})", args.progress):
        try:
            report = verify(lhs, rhs, method=args.method, seed=args.seed, timeout=args.timeout, trials=args.trials,
                            certificate=cert, backend=args.backend, numeric=args.numeric or False,
                            scheduler=args.scheduler, progress=False)
        except SymverifyError as e:  # name the file the error is about
            message = str(e)
            if isinstance(e, IRError) and cert is not None and message.startswith("certificate"):
                raise IRError(f"{args.certificate}: {e}") from None  # a certificate that does not fit the pair
            for side, path in (("lhs", args.lhs), ("rhs", args.rhs)):
                if message.startswith(f"verify {side}:"):  # a side over a size limit
                    e.args = (f"{path}: {message}",)
            if message.startswith("verify: the two sides have different shapes"):
                e.args = (f"{args.lhs} (lhs) and {args.rhs} (rhs): {message}",)
            option = re.match(r"(seed|trials|timeout|scheduler|numeric):", message)
            if option is not None:  # an option verify refused by its keyword (seed: …): named by its flag, --seed: …
                e.args = (f"--{message}",)
            raise
    _out(json.dumps(report.to_json(), indent=2) if args.json else str(report))  # a reader gone (| grep -q): the verdict's code
    return {Verdict.PROVED: EXIT_PROVED, Verdict.REFUTED: EXIT_REFUTED, Verdict.UNKNOWN: EXIT_UNKNOWN}[report.verdict]


def _check_verify_flags(args: argparse.Namespace) -> None:
    """Refuse a flag that the chosen ``--method`` never reads (it was ignored): ``--certificate``
    (checked by compositional and auto only), ``--trials`` (the randomized trials), ``--backend
    flint|sympy`` (the exact engine); ``verify`` refuses ``--backend torch|python`` and
    ``--scheduler`` outside their methods. ``--seed``, ``--timeout`` and ``--numeric`` are read by
    every method (the seed picks the counterexample candidates of a refutation too)."""
    from symverify.errors import UsageError
    from symverify.kernel.provers.options import CERTIFICATE_METHODS, EXACT_ENGINE_METHODS, READ_BY

    if args.certificate == "":  # an unset variable in CI: it was read as no certificate at all
        raise UsageError("--certificate: expected a certificate file, found an empty string")
    if args.certificate is not None and args.method not in CERTIFICATE_METHODS:
        raise UsageError(f"--certificate {args.certificate}: only methods {' and '.join(CERTIFICATE_METHODS)} check a "
                         f"stage certificate; found --method {args.method}")
    trial_methods = READ_BY["trials"]  # the methods that run randomized trials, as verify checks
    if args.trials is not None and args.method not in trial_methods:
        raise UsageError(f"--trials {args.trials}: sets the randomized trials, which only methods "
                         f"{' and '.join(trial_methods)} run; found --method {args.method}")
    if args.backend in ("flint", "sympy") and args.method not in EXACT_ENGINE_METHODS:
        raise UsageError(f"--backend {args.backend}: an exact engine, which only methods {', '.join(EXACT_ENGINE_METHODS)} "
                         f"use; found --method {args.method} (randomized's engines are torch and python)")


def info_dict(obj: Any) -> dict[str, Any]:
    """What ``symverify info`` shows for a loaded object."""
    from symverify.kernel.ir.certificate import Certificate
    from symverify.kernel.provers.sides import ModelSide, as_side

    if isinstance(obj, Certificate):
        return {
            "kind": "certificate",
            "boundaries": len(obj.boundaries),
            "stages": obj.num_stages,
            "layers": [b.layer for b in obj.boundaries],
            "max_cells": max((len(b.cells) for b in obj.boundaries), default=0),
            "meta": dict(obj.meta),
        }
    side = as_side(obj, "info")
    out = side.describe()
    match side:
        case ModelSide(obj=m):
            out["storage_rects"] = sum(g.storage_size() for layer in m.layers for _, g in layer.grids())
    return out


def _not_dash(flag: str, path: str | None, instead: str | None = None) -> None:
    """Refuse ``-`` for an output that is a file: ``prove --json -`` means standard output, and
    here it was written as a file named ``-``. ``instead`` says how to get standard output."""
    from symverify.errors import UsageError

    if path == "-":
        how = f"{instead}; " if instead else ""
        raise UsageError(f"{flag} -: expected a file path, found '-', which is not standard output here ({how}./- names "
                         "a file of that name)")


def _writable(path: str | None, what: str) -> None:
    """Refuse, before any work, an output path that cannot be written: a directory, a path in a
    missing directory, or one the system refuses (no permission, a read-only or virtual file
    system): a new regular file is created and removed again to find out; an existing one is
    opened for appending, which leaves it unchanged, and a new file made and removed beside it (the
    directory must take the file that replaces it: a writable file in a directory that is not was
    found out only after the work). A symbolic link is judged by the file it
    points to, which :func:`_write` replaces (a link to a file not written yet was "File exists")."""
    from symverify.errors import UsageError

    if path is None:
        return
    p = Path(path)
    if p.is_symlink():  # _write replaces the file a link points to: check that one (it may not exist yet)
        try:
            p = p.resolve()
        except (OSError, RuntimeError):  # a loop of links
            raise UsageError(f"{what} {path}: cannot write there (a loop of symbolic links)") from None
    if p.is_dir():
        raise UsageError(f"{what} {path}: expected a file path, found a directory")
    if not p.parent.is_dir():
        raise UsageError(f"{what} {path}: the directory {p.parent} does not exist")
    if p.exists() and not p.is_file():
        return  # a device or a FIFO (/dev/stdout, a pipe): opening it could block or consume it
    existed = p.exists()
    try:
        with open(p, "a" if existed else "x", encoding="utf-8"):
            pass
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot write there ({e.strerror or e})") from None
    if not existed:
        with contextlib.suppress(OSError):
            p.unlink()
        return
    from symverify.scripts.whole_file import new_temporary

    try:  # an existing file is replaced through a new one beside it (_write): the directory must take one
        fd, tmp = new_temporary(p)
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot write there: the file is replaced whole through a new file in "
                         f"{p.parent}, which cannot be made there ({e.strerror or e})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        tmp.unlink()


def _distinct(*outputs: tuple[str, str | None]) -> None:
    """Refuse two flags naming the same file (the second write would replace the first): the same
    path after symbolic links, or two paths of one existing file (a hard link: same device and inode)."""
    from symverify.errors import UsageError

    seen: dict[object, str] = {}
    for what, path in outputs:
        if path is None or path == "-":
            continue
        keys: list[object] = [os.path.realpath(path)]
        with contextlib.suppress(OSError):
            st = os.stat(path)
            keys.append((st.st_dev, st.st_ino))
        for key in keys:
            if key in seen:
                raise UsageError(f"{seen[key]} and {what} name the same file {path}: expected two different paths")
        seen.update(dict.fromkeys(keys, what))


def _file_keys(path: str) -> list[object]:
    """What identifies the file at ``path``: its path after symbolic links, and, when it exists,
    its device and inode (a hard link)."""
    keys: list[object] = [os.path.realpath(path)]
    with contextlib.suppress(OSError):
        st = os.stat(path)
        keys.append((st.st_dev, st.st_ino))
    return keys


def _spare_inputs(args: argparse.Namespace) -> None:
    """Refuse an output of ``prove``/``sweep`` (``--json``, ``--junit``, ``--golden`` with
    ``--update-golden``) that names a file the run reads: a ``*.py`` file of a ``--dir`` directory
    or of the built-in scripts' (the scripts and their support modules), the ``--golden`` run
    compared with, or the ``--scheduler`` file. Writing the run there would replace that input
    (the same path after symbolic links, or a hard link to it). So is an output naming any other
    existing file inside a ``--dir`` tree or the built-in scripts' (after symbolic links: a module
    of a sub-package, a data file a script reads there; or the file a hard link or a symbolic link
    inside that tree names, :func:`_linked_into`),
    unless that file holds what the flag writes, a run written there before (:func:`_holds_output`). ``args.dir`` is the final list of
    directories (after ``prove DIR/NAME.py``)."""
    from symverify.errors import UsageError
    from symverify.scripts import runner

    inputs: dict[object, str] = {}
    trees = [*((d, f"--dir {d}") for d in args.dir), (str(runner.builtin_dir()), "the built-in scripts")]
    for d, label in trees:
        for p in sorted(Path(d).glob("*.py")):
            inputs.update(dict.fromkeys(_file_keys(str(p)), f"the proof script file {p} of {label}"))
    if args.golden and not args.update_golden:
        inputs.update(dict.fromkeys(_file_keys(args.golden), f"the golden run --golden {args.golden}"))
    if args.scheduler and args.scheduler != "local" and os.path.isfile(args.scheduler):
        inputs.update(dict.fromkeys(_file_keys(args.scheduler), f"the scheduler file --scheduler {args.scheduler}"))
    outputs = [("--json", args.json), ("--junit", args.junit), ("--golden", args.golden if args.update_golden else None)]
    for flag, path in outputs:
        if path is None or path == "-":
            continue
        hit = next((inputs[k] for k in _file_keys(path) if k in inputs), None)
        if hit is not None:
            raise UsageError(f"{flag} {path} names {hit}, an input of this run, which writing the run would replace: "
                             "expected a path of no input")
        target = Path(path)
        if not target.exists() or target.is_dir():
            continue  # a new file, or a link to one (or a directory, refused when written)
        real = target.resolve()
        for d, label in trees:
            if real.is_relative_to(Path(d).resolve()) and not _holds_output(real, flag):
                raise UsageError(f"{flag} {path} names the file {real} inside {label}, which a script there may read "
                                 "(a module of a sub-package, a data file) and writing the run would replace: expected a "
                                 "path outside that tree, a new file, or a run file written there before")
        twin = None if _holds_output(real, flag) else _linked_into(real, trees, f"{flag} {path}")
        if twin is not None:
            where, label, link = twin
            how = (f"is the file the symbolic link {where} inside {label} points to, which a script there may read "
                   "through it: writing the run would replace what it reads" if link else
                   f"is a hard link to the file {where} inside {label} (the same device and inode), which a script "
                   "there may read: writing the run would leave that file as it was and this path no longer linked to it")
            raise UsageError(f"{flag} {path} {how}; expected a path outside that tree, a new file, or a run file "
                             "written there before")


LINK_SCAN_LIMIT = 100_000
"""The most names of the ``--dir`` trees (and the built-in scripts') :func:`_linked_into` looks at
for one output: a tree larger than that (``--dir /``) is not searched to its end, and an output
that would need the search is refused, saying so."""


def _linked_into(real: Path, trees: list[tuple[str, str]], what: str) -> tuple[Path, str, bool] | None:
    """A name inside one of the ``(directory, label)`` ``trees`` (at any depth, symbolic links to
    directories not followed) of the existing regular file ``real`` from outside it: a hard link to
    it (the same device and inode), or a symbolic link that points to it; with that tree's label and
    whether it is a symbolic link. None when there is none.

    Called only for an output that exists and does not hold what its flag writes
    (:func:`_spare_inputs`). The work is bounded: directories are read by ``os.scandir``, whose
    entries say whether they are links and give their inode without a ``stat``; a symbolic link is
    followed (one ``stat``); a file is compared only when ``real`` has other hard links (its
    ``st_nlink`` > 1) and the entry's inode is ``real``'s. At most :data:`LINK_SCAN_LIMIT` names are
    looked at: past them the output (``what``, the flag and path) is refused, a ``UsageError``, since
    whether a script reads it through a link could not be told."""
    import stat

    from symverify.errors import UsageError

    try:
        st = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    hard = st.st_nlink > 1  # a link count of 1: no other name of this file exists anywhere
    looked = 0
    for d, label in trees:
        stack = [d]
        while stack:
            try:
                entries = os.scandir(stack.pop())
            except OSError:  # a directory gone meanwhile, or unreadable
                continue
            with entries:
                for e in entries:
                    looked += 1
                    if looked > LINK_SCAN_LIMIT:
                        raise UsageError(f"{what}: an existing file that is no run written before, and the trees of this "
                                         f"run hold more than {LINK_SCAN_LIMIT} names, too many to look for a link to it "
                                         "that a script there may read: expected a new file or a run file written "
                                         "there before")
                    try:
                        if e.is_symlink():
                            other = os.stat(e.path)  # the file it points to (a dangling link: OSError)
                            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                                return Path(e.path), label, True
                        elif e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif hard and e.inode() == st.st_ino:
                            if e.stat(follow_symlinks=False).st_dev == st.st_dev:
                                return Path(e.path), label, False
                    except OSError:  # a dangling link, a file gone meanwhile
                        continue
    return None


def _holds_output(path: Path, flag: str) -> bool:
    """Whether the regular file ``path`` begins as what ``flag`` writes: a proof run's JSON
    (``{"format": "symverify.proof-run"``, for ``--json`` and ``--golden``) or ``prove``'s JUnit XML
    (for ``--junit``); its first 256 bytes are read (a FIFO or a device is never opened)."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return False
    if flag == "--junit":
        return head.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="symverify prove"')
    return re.match(rb'\{\s*"format"\s*:\s*"symverify\.proof-run"', head) is not None


def _write(path: str, text: str, what: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`symverify.scripts.whole_file.write_whole`:
    a new file beside it renamed over it; a symbolic link followed; a warning when other hard links
    keep the previous content); a failure is a ``UsageError`` naming the flag ``what``."""
    from symverify.scripts.whole_file import write_whole

    write_whole(path, text, what)


def _compile_file(path: str, method: str, plan: str = "auto", progress: bool | None = None) -> Any:
    from symverify.compiler import compile
    from symverify.errors import UsageError
    from symverify.kernel.ir.circuit import Circuit

    circuit = _load(path)
    if not isinstance(circuit, Circuit):
        raise UsageError(f"{path}: expected a circuit to compile, found a {type(circuit).__name__}")
    if method == "kaleidoscope":
        return compile(circuit, method=method, plan=plan, progress=progress)
    if plan != "auto":
        raise UsageError(f"--plan {plan}: only the kaleidoscope method plans layouts, found --method {method}")
    return compile(circuit, method=method, progress=progress)


def _cmd_compile(args: argparse.Namespace) -> int:
    from symverify.errors import UsageError
    from symverify.ir.serialize import dumps

    for flag, value in (("-o", args.output), ("--certificate", args.certificate)):
        if value == "":  # an unset variable: not the current directory
            raise UsageError(f"{flag}: expected a file path, found an empty string")
        _not_dash(flag, value, "leave -o out for standard output" if flag == "-o" else None)
    _distinct(("CIRCUIT.json", args.circuit), ("-o", args.output), ("--certificate", args.certificate))
    if args.output is None and sys.stdout is None:  # closed (>&-): the model, the command's product, would go nowhere
        raise UsageError("compile: standard output is closed, and without -o the model is written there: expected -o "
                         "MODEL.json, or an open standard output")
    _writable(args.output, "-o")
    _writable(args.certificate, "--certificate")
    compiled = _compile_file(args.circuit, args.method, args.plan, args.progress)
    if args.output is None:  # the model on stdout (pipe it on), the summary on stderr
        _out(dumps(compiled.model))
    else:  # whole or not at all: a model file cut short by a full disk or an interruption is never left
        _write(args.output, dumps(compiled.model), "-o")
    if args.certificate and compiled.certificate is not None:
        _write(args.certificate, dumps(compiled.certificate), "--certificate")
    _out(json.dumps(compiled.to_json(), indent=2) if args.json else _line(str(compiled)),
         sys.stdout if args.output is not None else sys.stderr)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from symverify.ir.bigint import show_int
    from symverify.kernel.provers.outcome import jsonable

    data = info_dict(_load(args.file))
    compiled = _compile_file(args.file, args.compile) if args.compile else None
    if args.json:  # integers as a verify report writes them: a degree bound of 10^5000 is an exact string
        if compiled is not None:
            data["compiled"] = compiled.to_json()
        _out(json.dumps(jsonable(data), indent=2, default=str))
        return 0
    _out(f"{_line(args.file)}: {data.pop('kind')}")
    for k, v in data.items():  # a name is the file's text: shown, never run by the terminal
        shown = show_int(v) if isinstance(v, int) and not isinstance(v, bool) else str(v)  # str() stops at 4300 digits
        _out(f"  {k}: {_line(shown)}")
    if compiled is not None:
        _out(f"  compiled ({compiled.method}): signature (N, L, d, N', d') = {compiled.model.signature}")
        for k, v in compiled.resources.items():
            bound = f"  (stated bound {compiled.bounds[k]})" if k in compiled.bounds else ""
            _out(f"    {k}: {v}{bound}")
        if compiled.over_bound():
            over = [f"{k}={compiled.resources[k]} > {compiled.bounds[k]}" if k in compiled.resources and k in compiled.bounds
                    else k for k in compiled.over_bound()]
            _out(f"    OVER BOUND: {', '.join(over)}")
    return 0


def _cmd_prove(args: argparse.Namespace) -> int:
    from symverify.errors import UsageError
    from symverify.scripts import runner

    _check_run_options(args)
    args.dir = _user_dirs(args.dir)
    args.names = _script_paths(args)
    _spare_inputs(args)
    scripts = runner.available(args.dir)
    for name in args.names:  # --dir DIR NAME where DIR/NAME.py is no regular file: say what it is
        for d in args.dir if name not in scripts else ():
            what = runner.not_a_script(Path(d) / f"{name}.py")
            if what is not None:
                raise UsageError(f"proof script {name}: {Path(d) / f'{name}.py'} is {what}, not a proof script file")
    default = [n for n, sc in scripts.items() if sc.source != runner.BUILTIN] if args.dir else None
    if args.list:
        given = [flag for flag, value in (("--json", args.json), ("--junit", args.junit), ("--golden", args.golden),
                                          ("--update-golden", args.update_golden)) if value]
        if given:
            raise UsageError(f"--list prints the scripts and runs none, so it writes no run: leave out {', '.join(given)}")
        unread = [flag for flag, value in (("--quick", args.quick), ("-j", args.jobs is not None),
                                           ("--scheduler", args.scheduler), ("--cases-per-task", args.cases_per_task),
                                           ("--timeout", args.timeout is not None), ("--timings", args.timings),
                                           ("--details", args.details), ("--wide", args.wide)) if value]
        if unread:  # each was ignored: --list reads only --dir and the names
            raise UsageError(f"--list prints the scripts and runs none, so it reads only --dir and the names: leave out "
                             f"{', '.join(unread)}")
        return _list_scripts(scripts, runner.select(scripts, args.names, default))
    if default == [] and not args.names:  # --dir without names runs the directories' scripts: there are none
        raise UsageError(f"--dir {', '.join(args.dir)}: expected proof scripts NAME.py (names starting with '_' are "
                         "support modules), found none")
    chosen = runner.select(scripts, args.names, default)
    # Named scripts are compared with their part of a golden run; a run of every script (no names, or
    # 'all') with all of it, so a script of the golden run that is gone (deleted, renamed) is a difference.
    named = bool(args.names) and "all" not in args.names
    return _run(args, scripts, chosen, args.quick, golden_scripts=chosen if named else None)


def _user_dirs(dirs: list[str]) -> list[str]:
    """``--dir`` directories less the built-in scripts' own (``--dir proofs`` in a checkout, or the
    path of a built-in script, ``proofs/primitives.py``): their scripts are the built-in ones, run
    under their names; read as a user's directory, each was refused as a second script of a
    built-in name (naming the first of them, not the one asked for)."""
    from symverify.scripts import runner

    builtin = runner.builtin_dir()
    return [d for d in dirs if Path(d).resolve() != builtin]


def _script_paths(args: argparse.Namespace) -> list[str]:
    """``prove DIR/NAME.py``: a name ending in ``.py`` is the path of the user's script, read as
    ``--dir DIR NAME`` (each directory added once; a symbolic link's own directory, not its
    target's; the built-in scripts' directory never: ``proofs/primitives.py`` is ``primitives``).
    A ``_NAME.py`` is a support module, never a script."""
    from symverify.errors import UsageError
    from symverify.scripts import runner

    names: list[str] = []
    seen = {Path(d).resolve() for d in args.dir} | {runner.builtin_dir()}  # a built-in script's own file: its name
    for name in args.names:
        if not name.endswith(".py"):
            names.append(name)
            continue
        path = Path(name)
        what = runner.not_a_script(path)
        if what is not None:
            raise UsageError(f"{name}: expected a proof script file NAME.py, found {what}")
        if not path.is_file():
            raise UsageError(f"{name}: no such proof script file")
        if path.stem.startswith("_"):
            raise UsageError(f"{name}: expected a proof script NAME.py; a file whose name starts with '_' is a support "
                             "module of its directory, never run as a script (rename it)")
        where = path.absolute().parent.resolve()  # the link's directory: the script is found there by its name
        if where not in seen:
            seen.add(where)
            args.dir.append(str(path.parent))
        names.append(path.stem)
    return names


def _list_scripts(scripts: Any, names: list[str]) -> int:
    """``prove --list``: one line per script: name, where it comes from, what it proves. A name,
    directory or ``TITLE`` is the user's text, shown on its one line with its line breaks and
    control characters escaped (:func:`_line`): a ``TITLE`` holding ``\n`` or an ESC sequence
    neither adds a line nor reaches the terminal."""
    shown = {name: _line(name) for name in names}
    width = max((len(n) for n in shown.values()), default=0)
    for name in names:
        sc = scripts[name]
        flags = "".join(f" [{f}]" for f, on in (("sweep", sc.sweep), ("shardable", sc.shardable)) if on)
        _out(f"{shown[name]:<{width}}  {_line(sc.source)}{flags}  {_line(sc.title)}".rstrip())
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from symverify.errors import UsageError
    from symverify.ir.bigint import show_int
    from symverify.scripts import runner
    from symverify.scripts.protocol import SWEEP_ENV, parse_indices

    _check_run_options(args)
    grid: dict[str, Any] = {}
    for key in ("widths", "depths", "seeds"):
        text = getattr(args, key)
        if text is not None:
            grid[key] = parse_indices(text, f"--{key}")
            if key != "seeds" and 0 in grid[key]:
                raise UsageError(f"--{key}: expected positive integers, found {text!r}")
    from symverify.ir import limits

    if grid.get("widths") and max(grid["widths"]) > limits.MAX_INPUTS:  # a circuit of cut width w reads w inputs
        raise UsageError(f"--widths: a circuit of cut width {show_int(max(grid['widths']))} reads that many inputs, more "
                         f"than symverify.ir.limits.MAX_INPUTS = {limits.MAX_INPUTS}")
    w_max, depth_max = max(grid.get("widths") or [1]), max(grid.get("depths") or [1])
    if w_max * depth_max > limits.MAX_GATES:  # a layered circuit of width w and depth Δ has w·Δ gates (≥ Δ)
        what = f"width {show_int(w_max)} and depth {show_int(depth_max)}" if grid.get("widths") else f"depth {show_int(depth_max)}"
        raise UsageError(f"--widths/--depths: a circuit of {what} has at least {show_int(w_max * depth_max)} gates, more "
                         f"than symverify.ir.limits.MAX_GATES = {limits.MAX_GATES}")
    if args.compilers is not None:
        names = [c.strip() for c in args.compilers.split(",")]
        bad = [c for c in names if c not in ("kaleidoscope", "dense")]
        if bad or not names:
            raise UsageError(f"--compilers: expected kaleidoscope and/or dense, found {args.compilers!r}")
        grid["compilers"] = list(dict.fromkeys(names))
    text = json.dumps(grid, sort_keys=True)
    if len(SWEEP_ENV) + 1 + len(text.encode("utf-8")) >= ENV_STRING_MAX:  # one NAME=VALUE string of the environment
        given = "/".join(f"--{k}" for k in grid)
        raise UsageError(f"{given}: expected a grid that fits in the environment variable {SWEEP_ENV} (less than "
                         f"{ENV_STRING_MAX} bytes), found {sum(map(len, grid.values()))} values ({len(text)} bytes); "
                         "split the sweep into several runs")
    args.dir = _user_dirs(args.dir)
    _spare_inputs(args)
    scripts = runner.available(args.dir)
    name = runner.sweep_script(scripts, args.family)
    return _run(args, scripts, [name], False, {SWEEP_ENV: text} if grid else None, golden_scripts=[name])


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse, before any work, options of ``prove``/``sweep`` that cannot work together."""
    from symverify.errors import UsageError

    # An empty value (an unset $GOLDEN in a CI script) is refused, never read as the flag left out: --golden '' ran
    # without comparing, --scheduler '' ran here, --dir '' read the current directory
    for flag, value, expected in (("--json", args.json, "a file path, or '-' for standard output"),
                                  ("--junit", args.junit, "a file path, or '-' for standard output"),
                                  ("--golden", args.golden, "a file path"),
                                  ("--scheduler", args.scheduler, "a scheduler's address or file, or 'local'"),
                                  *(("--dir", d, "a directory of proof scripts") for d in args.dir)):
        if value == "":
            raise UsageError(f"{flag}: expected {expected}, found an empty string")
    if args.json == "-" and args.junit == "-":
        raise UsageError("--json - and --junit -: expected at most one of them on standard output, found both")
    for flag, value in (("--json", args.json), ("--junit", args.junit)):
        if value == "-" and sys.stdout is None:  # closed (>&-): the run's file would go nowhere, and exit 0 say nothing
            raise UsageError(f"{flag} -: standard output is closed, so the run written there would be lost: expected "
                             "a file path, or an open standard output")
    if args.golden == "-":  # a golden run is read back and rewritten: it is a file
        raise UsageError("--golden: expected a file path, found '-' (standard output cannot hold a golden run)")
    _distinct(("--json", args.json), ("--junit", args.junit), ("--golden", args.golden))
    for flag, value in (("--json", args.json), ("--junit", args.junit)):
        if value != "-":
            _writable(value, flag)
    if args.update_golden and not args.golden:
        raise UsageError("--update-golden needs --golden RUN.json (where to write the run)")
    if args.golden and args.update_golden:
        _writable(args.golden, "--golden")
    elif args.golden and not Path(args.golden).exists():
        raise UsageError(f"--golden {args.golden}: no such file; run once with --golden {args.golden} --update-golden "
                         "to write it from an ok run")
    if args.timings and not (args.json or (args.golden and args.update_golden)):
        raise UsageError("--timings keeps times in the run JSON, and this run writes none: pass --json OUT "
                         "(or --golden RUN.json --update-golden)")
    if args.jobs is not None and args.scheduler and args.scheduler != "local":
        raise UsageError(f"-j {args.jobs}: sets the processes here or the workers of --scheduler local; the cluster at "
                         f"--scheduler {args.scheduler} has its own workers")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"-j: expected a positive number of processes, found {args.jobs}")
    if args.jobs is not None and args.jobs > MAX_JOBS:  # a shardable script is split into -j processes
        raise UsageError(f"-j: expected at most {MAX_JOBS} processes at once (a shardable script is split into -j "
                         f"processes; results do not depend on -j), found {args.jobs}")
    if args.cases_per_task is not None:
        if not args.scheduler:
            raise UsageError("--cases-per-task is for Dask runs (--scheduler); the process pool splits scripts by -j")
        if args.cases_per_task < 1:
            raise UsageError(f"--cases-per-task: expected a positive number, found {args.cases_per_task}")
    if args.scheduler:
        from symverify.scripts.dask_backend import check_address

        check_address(args.scheduler)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    """``text`` with its control characters (the ESC of a terminal sequence, NUL, a carriage
    return, C1 codes; not newlines and tabs) written as ``\\xNN``: a script's own text is shown,
    never run by the terminal (a colour left on, a cleared screen, a line overwritten)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _esc(text: str) -> str:
    """``text`` shown literally by rich: script names, titles, instance names and errors are the
    scripts' own text, and ``[x]`` in them must neither vanish as a tag nor fail as one, nor a
    control character reach the terminal (:func:`_visible`)."""
    from rich.markup import escape

    return escape(_visible(text))


def _cases_per_task_reaches(args: argparse.Namespace, scripts: Any, chosen: list[str]) -> None:
    """``--cases-per-task C`` splits a shardable script (``SHARDABLE = True``) into tasks of ``C``
    cases; a script that is not shardable runs as one task whatever ``C`` is. Before any work: a run
    none of whose scripts is shardable is refused (the flag would do nothing), and one with some that
    are not says so on standard error, naming them, in one ``symverify: warning:`` line."""
    from symverify.errors import UsageError

    if args.cases_per_task is None:
        return
    whole = [n for n in chosen if not scripts[n].shardable]
    if not whole:
        return
    names = ", ".join(_line(n) for n in whole)
    if len(whole) == len(chosen):
        raise UsageError(f"--cases-per-task {args.cases_per_task}: splits a shardable script (SHARDABLE = True) into tasks "
                         f"of that many cases, and no script of this run is shardable ({names}): expected it left out")
    which = f"the proof script {names} is" if len(whole) == 1 else f"the proof scripts {names} are"
    _say(f"symverify: warning: --cases-per-task {args.cases_per_task}: {which} not shardable (no SHARDABLE = True) "
         "and run as one task each")


def _run(args: argparse.Namespace, scripts: Any, chosen: list[str], quick: bool, env: dict[str, str] | None = None,
         *, golden_scripts: list[str] | None = None) -> int:
    """Run ``chosen`` (on the process pool, or on Dask with ``--scheduler``), print the table and
    write the files; the exit code of ``prove``. ``--golden`` compares the run with the stored run's
    scripts ``golden_scripts`` (None: with every script it holds)."""
    import signal

    from rich.console import Console

    from symverify.progress import stdout_to_devnull
    from symverify.scripts import runner
    from symverify.scripts.protocol import SWEEP_ENV

    _cases_per_task_reaches(args, scripts, chosen)
    # The grid of a sweep comes only from `symverify sweep`: a SYMVERIFY_SWEEP left in the shell does not reach
    # the scripts of `symverify prove` (their default grids), nor replace the grid of a sweep.
    env = {SWEEP_ENV: "", **(env or {})}
    golden = runner.load_run(args.golden) if args.golden and not args.update_golden else None
    if args.golden and args.update_golden and golden_scripts is not None:
        _stored_run_reads(args.golden)
    jobs = args.jobs or os.cpu_count() or 1
    width = 160 if args.wide else 80
    # Tables fit `width` columns when the output is not a terminal; lines of text are never hard-wrapped
    # (soft_wrap), so formulas and --details lines stay whole in logs and pipes.
    class _Tolerant(Console):
        def on_broken_pipe(self) -> None:
            """The reader of this console's pipe has gone (``2>&1 | head -1``): print nothing more there and
            go on. rich's own raised ``SystemExit(1)``, a failed run's code, before --json/--junit were
            written, and pointed standard output at the null device even for the console of standard error."""
            self.quiet = True
            _to_devnull(self.file)

    err = _Tolerant(stderr=True, width=None if _isatty(sys.stderr) else width, highlight=False, soft_wrap=True)
    out = _Tolerant(width=None if _isatty(sys.stdout) and not args.wide else width, highlight=False,
                    file=sys.stderr if "-" in (args.json, args.junit) else None, soft_wrap=True)
    # A spinner only on a real terminal: FORCE_COLOR=1 (set by many CI services) makes rich treat a pipe as a
    # terminal, and an animated status there fills the log with redrawn lines. Colours are still honoured.
    progress = err.status("") if err.is_interactive and _isatty(sys.stderr) else None
    left = list(chosen)

    def start(name: str) -> None:
        if progress is not None:
            progress.update(f"[bold]proving[/bold] {_esc(', '.join(left[:3]))}{' …' if len(left) > 3 else ''} "
                            f"({len(chosen) - len(left)}/{len(chosen)} done)")

    def done(o: runner.ScriptOutcome) -> None:
        if o.name in left:
            left.remove(o.name)
        mark = "[green]ok[/green]" if o.ok else f"[red]{o.status}[/red]"
        c = o.counts()
        argued = f", {c['argued']} argued" if c.get("argued") else ""
        err.print(f"{_esc(o.name)}: {mark} {c['proved']}/{len(o.instances())} proved{argued} [{o.seconds:.1f} s]")
        start(o.name)

    def run_all() -> runner.RunSummary:
        if args.scheduler:
            from symverify.scripts import dask_backend

            return dask_backend.run_scripts(scripts, chosen, scheduler=args.scheduler, quick=quick,
                                            workers=jobs if args.scheduler == "local" else None, timeout=args.timeout,
                                            env=env, on_start=start, on_done=done, cases_per_task=args.cases_per_task)
        return runner.run_scripts(scripts, chosen, quick=quick, jobs=jobs, timeout=args.timeout, env=env,
                                  on_start=start, on_done=done)

    previous = _catch_sigterm()
    try:
        if progress is not None:
            with progress:
                summary = run_all()
        else:
            summary = run_all()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    out.print(_table(summary, args.wide))
    if args.details:
        _print_details(out, summary)
    _print_failures(out, summary)
    data = summary.to_json(args.timings)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:  # a reader that has gone (| head), or none at all (>&-), ends neither the run nor its other files
        if sys.stdout is None:
            pass
        elif args.json == "-":  # the same JSON, \u-escaped where standard output is ASCII-only
            from symverify.progress import encodes

            sys.stdout.write(text if encodes(sys.stdout, text) else json.dumps(data, indent=2) + "\n")
            sys.stdout.flush()
        if args.junit == "-" and sys.stdout is not None:  # XML declares its encoding (UTF-8), whatever standard output's is
            sys.stdout.flush()
            sys.stdout.buffer.write(runner.junit_xml(summary).encode("utf-8"))
            sys.stdout.buffer.flush()
    except BrokenPipeError:
        stdout_to_devnull()
    if args.json and args.json != "-":
        _write(args.json, text, "--json")
    if args.junit and args.junit != "-":
        _write(args.junit, runner.junit_xml(summary), "--junit")
    code = 0 if summary.ok else 1
    if args.golden and args.update_golden:
        if summary.ok:
            kept: list[str] = []
            dropped = ""
            if golden_scripts is not None:  # named scripts: compared with their part of the golden run, they replace only it
                merged, kept, dropped = runner.golden_update(data, args.golden)
                text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
            _write(args.golden, text, "--golden")
            out.print(f"golden run written to {_line(args.golden)}"
                      + (f" (its other scripts kept: {_line(', '.join(kept))})" if kept else "")
                      + (f" ({_line(dropped)})" if dropped else ""), markup=False)
        else:
            out.print("golden run not written: this run is not ok")
    elif golden is not None:
        diff = runner.golden_diff(data, golden, golden_scripts)
        if diff:
            out.print(f"[red]this run differs from the golden run {_esc(_line(args.golden))}[/red] (--update-golden rewrites it):")
            out.print(_visible(diff), markup=False)
            code = 1
        else:
            out.print(f"matches the golden run {_line(args.golden)}", markup=False)
        note = runner.golden_note(data, golden, golden_scripts)
        if note:
            out.print(f"note: {note}", markup=False)
    if summary.interrupted:
        err.print("symverify: interrupted; the table and files above hold the scripts that finished")
        return 130
    return code


def _stored_run_reads(path: str) -> None:
    """Refuse, before the run, ``--update-golden`` of named scripts (``prove a --golden G
    --update-golden``, or ``sweep``) over a stored file ``G`` that exists, is not empty and does not
    read as a run (:func:`~symverify.scripts.runner.load_run`: a merge conflict left in it, a run of a
    newer symverify, another kind of file): such an update keeps the stored run's other scripts, and
    with none read it wrote this run's scripts alone over the file, every other script's record lost
    without a word. The error says why the file does not read and what to do (fix it, or remove it
    to write this run alone)."""
    from symverify.errors import UsageError
    from symverify.scripts import runner

    p = Path(path)
    with contextlib.suppress(OSError):
        if not p.is_file() or p.stat().st_size == 0:  # nothing stored (none, empty, a device), nothing to lose
            return
    try:
        runner.load_run(path)
    except (SymverifyError, OSError) as e:
        why = " ".join((e.strerror or str(e)) if isinstance(e, OSError) else str(e).split())
        raise UsageError(f"--golden {path} --update-golden: a run of named scripts replaces only their part of the "
                         f"stored run and keeps its other scripts, but the stored file does not read as a run ({why}); "
                         "expected a run written by symverify prove: fix it, or remove it to write this run alone") from None


def _isatty(stream: Any) -> bool:
    """Whether ``stream`` is a terminal: False for a closed one (``>&-``, ``2>&-``: Python then has
    ``None``, and ``sys.stdout.isatty()`` was an internal error of ``prove``)."""
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _on_main_thread() -> bool:
    """Signal handlers can only be installed from the main thread (tests call main() from others)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _catch_sigterm() -> Any:
    """Install :func:`_interrupt` for SIGTERM and return the handler it replaced (for the caller to
    restore), only on the main thread and only where SIGTERM has its default disposition: one
    ignored (``SIG_IGN``, inherited from a ``nohup``-like parent that asked for the process to
    outlive a SIGTERM) or handled by the embedding program stays as it is (None: nothing installed)."""
    import signal

    if not _on_main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM (a CI job's timeout) stops a run like Ctrl-C: partial table and files, no traceback."""
    raise KeyboardInterrupt


_STATUS = {"ok": "[green]ok[/green]", "failed": "[red]FAILED[/red]", "crashed": "[red]CRASHED[/red]",
           "timeout": "[red]TIMED OUT[/red]", "interrupted": "[yellow]INTERRUPTED[/yellow]"}


def _table(summary: Any, wide: bool = False) -> Any:
    """The run as a table: 80 columns (script, result, proved/refuted/unknown/argued, the resource
    closest to its bound or what is over, time); ``wide`` adds titles and the whole over-bound
    list."""
    from rich.table import Table

    from symverify.scripts.runner import NO_RESULT

    where = summary.where or f"-j {summary.jobs}"
    t = Table(title=f"proof scripts{' (quick)' if summary.quick else ''}, {where}", title_justify="left")
    t.add_column("script", no_wrap=True, overflow="fold")
    if wide:
        t.add_column("title", overflow="ellipsis", no_wrap=True, max_width=44)
    t.add_column("result", no_wrap=True)
    t.add_column("p/r/u/a", no_wrap=True, justify="right")
    t.add_column("tightest bound / over", overflow="fold", min_width=16)
    t.add_column("time", no_wrap=True, justify="right")
    for o in summary.outcomes:
        c = o.counts()
        over = o.over_bound()
        tight = o.tightest()
        if o.status in NO_RESULT:
            bounds = "-"
        elif over:
            over = o.over_bound_shown()
            shown = over if wide else over[:1]
            bounds = f"{len(over)} over: " + ", ".join(shown) + (" …" if len(over) > len(shown) else "")
        else:
            bounds = tight or "no bounds"
        row = [_esc(o.name)] + ([_esc(o.title)] if wide else []) + [_STATUS[o.status], f"{c['proved']}/{c['refuted']}/{c['unknown']}/{c.get('argued', 0)}",
                                                                         _esc(bounds), _time_cell(o.seconds)]
        t.add_row(*row)
    t.caption = "p/r/u/a: instances proved/refuted/unknown; argued claims (never proved)"  # ≤ 80 columns
    t.caption_justify = "left"
    return t


def _time_cell(s: float) -> str:
    """A row's time as the per-script line and the footer write it (0.1 s) below 10 s, so a 0.4 s
    script is not shown as "0 s" beside "[0.4 s]"; whole seconds above, to keep the column narrow."""
    return f"{s:.1f} s" if s < 9.95 else f"{s:.0f} s"


def _print_details(out: Any, summary: Any) -> None:
    """Every instance: verdict (``argued`` for an argued claim, as the table counts it), kind, method and
    each resource with its bound and the ratio value/bound."""
    from symverify.scripts.runner import claim_detail, ratios

    for o in summary.outcomes:
        out.print(f"[bold]{_esc(o.name)}[/bold] {_esc(o.title)}")
        for inst in o.instances():
            rs = ratios(inst)
            bounded = {k for k, *_ in rs}
            parts = [f"{k}={v} (bound {b}: {float(r):.2f})" for k, v, b, r in rs]
            parts += [f"{k}={v}" for k, v in inst.get("resources", {}).items() if k not in bounded]
            mark = "" if inst.get("ok") else " [red]<--[/red]"
            basis = f" ({inst['basis']})" if inst.get("basis") else ""
            kind = inst.get("kind", "prover")
            shown = "argued" if kind == "argued" else inst.get("verdict")  # never decided: not "unknown"
            out.print(f"  {shown!s:8} {kind:8} {_esc(str(inst.get('method')))}  "
                      f"{_esc(str(inst.get('name')))}{_esc(basis)}{mark}",
                      highlight=False)
            if parts:
                out.print(_visible("      " + ", ".join(parts)), highlight=False, markup=False)
            if claim_detail(inst):  # a ∀ proof's hypotheses, which its name leaves out
                out.print(_visible(f"      {claim_detail(inst)}"), highlight=False, markup=False)


def _print_failures(out: Any, summary: Any) -> None:
    from symverify.scripts import runner

    for o in summary.outcomes:
        if o.output_cut:  # a finished script's output is never shown: the cut is said here, for ok rows too
            out.print(_visible(f"{o.name}: output cut: {o.output_cut}"), highlight=False, markup=False)
        if o.ok:
            continue
        if o.status in runner.NO_RESULT:
            out.print(f"[red]{_esc(o.name)} {o.status}[/red]: {_esc(o.error)}", markup=True, highlight=False)
            continue
        for inst in o.instances():
            if not inst.get("ok"):
                why = runner.failure_reason(inst)
                out.print(_visible(f"{o.name}: {inst.get('name')}: {why} {inst.get('detail', '')}".rstrip()), highlight=False,
                          markup=False)
                if inst.get("counterexample") is not None:
                    cex = json.dumps(inst["counterexample"], ensure_ascii=False)
                    shown = cex if len(cex) <= 400 else f"{cex[:400]}… ({len(cex)} characters; all of it in --json)"
                    out.print(_visible(f"  counterexample: {shown}"), highlight=False, markup=False)
        if not o.instances():
            out.print(_visible(f"{o.name}: no instances checked"), highlight=False, markup=False)
    n_ok = sum(o.ok for o in summary.outcomes)
    out.print(f"{n_ok}/{len(summary.outcomes)} scripts ok in {summary.seconds:.1f} s", highlight=False)


def _cmd_report(args: argparse.Namespace) -> int:
    from symverify.errors import UsageError
    from symverify.viz.report import report_page

    if args.output == "":  # an unset variable: not the current directory
        raise UsageError("-o: expected a file path, found an empty string")
    _not_dash("-o", args.output)
    _distinct(("RUN.json", args.run), ("-o", args.output))
    _writable(args.output, "-o")  # before the page is made: a missing directory is said at once
    _write(args.output, report_page(args.run), "-o")  # whole or not at all, as the files of prove
    _out(f"wrote {_line(args.output)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``symverify`` command; returns the exit code."""
    from symverify.progress import tolerant_output

    with tolerant_output(), _terminate_interrupts():
        return _main(argv)


@contextlib.contextmanager
def _terminate_interrupts() -> Any:
    """SIGTERM (a CI job's timeout, ``kill``) stops every command as Ctrl-C does: ``symverify:
    interrupted`` and exit code 130 (the exit-code table), with the cleanup of a ``KeyboardInterrupt``
    (a guarded child process stopped); only ``prove`` and ``sweep`` did, and ``verify`` ended killed
    by the signal, with no line and exit code 143. The previous handler is restored after; off the
    main thread (tests, notebooks) no handler can be installed and none is, nor where SIGTERM is not
    at its default (:func:`_catch_sigterm`)."""
    import signal

    previous = _catch_sigterm()
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    try:
        parser = _parser()
        parser.argv = list(sys.argv[1:] if argv is None else argv)  # type: ignore[attr-defined]  # for --version
        args, extra = parser.parse_known_args(argv)
        if args.command is None:  # an unknown option before any command (``--bogus``) is named, not just "required"
            commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
            parser.error(f"expected a command ({', '.join(commands)}), found {' '.join(map(_line, extra))}" if extra
                         else f"the following arguments are required: command (one of {', '.join(commands)})")
        if extra:  # named by the subcommand's parser: "see symverify sweep --help", not "symverify --help"
            subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            subcommands.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    except KeyboardInterrupt:  # Ctrl-C while the command line is read (imports): no traceback either
        _say("symverify: interrupted")
        return 130
    try:
        if args.command == "verify":
            return _cmd_verify(args)
        if args.command == "info":
            return _cmd_info(args)
        if args.command == "compile":
            return _cmd_compile(args)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "sweep":
            return _cmd_sweep(args)
        return _cmd_prove(args)
    except SymverifyError as e:
        return _fail(" ".join(_args_shown(str(e), argv).split("\n")[0].split()) or type(e).__name__)
    except OSError as e:  # a file that vanished or could not be written after the checks, or a closed pipe
        where = e.filename if e.filename is not None else "standard output" if isinstance(e, BrokenPipeError) else None
        return _fail(f"{_line(str(where))}: {e.strerror or e}" if where is not None else f"{e.strerror or e}")
    except KeyboardInterrupt:
        _say("symverify: interrupted")
        return 130
    except MemoryError:
        return _fail("out of memory (the input is too large for this machine; see symverify.ir.limits)")
    except RecursionError:
        return _fail("internal error (please report it): recursion too deep")
    except Exception as e:  # the command line never shows a traceback unless asked
        if _traceback_asked():
            raise
        try:
            detail = " ".join(str(e).split())[:200]
        except Exception:
            detail = ""
        return _fail(f"internal error (please report it; SYMVERIFY_TRACEBACK=1 shows where): {type(e).__name__}: {detail}")


def _args_shown(message: str, argv: Sequence[str] | None) -> str:
    """``message`` with each command-line argument that holds a line break or another control
    character (a path ``a\\nb.json``) written with escapes (:func:`_line`): a message is cut at its
    first line break, which must not fall inside a path and take the rest of the message along."""
    for a in sorted({a for a in (sys.argv[1:] if argv is None else argv) if _line(a) != a}, key=len, reverse=True):
        message = message.replace(a, _line(a))
    return message


def _line(text: str) -> str:
    """``text`` on one line: line breaks and other control characters as ``\\n``, ``\\xNN``."""
    return _visible(text.replace("\n", "\\n").replace("\t", "\\t"))


def _traceback_asked() -> bool:
    """Whether ``SYMVERIFY_TRACEBACK`` asks for the traceback of an internal error (:func:`symverify.progress.env_switch`:
    the on and off words, empty or unset is off). It is read while an error is already being reported, so any
    other value is not a second error: a warning on stderr names it and the traceback stays hidden."""
    from symverify.errors import UsageError
    from symverify.progress import env_switch

    try:
        return env_switch("SYMVERIFY_TRACEBACK", "show the traceback of an internal error", "hide it", "hide it") is True
    except UsageError as e:
        _say(f"symverify: warning: {_visible(str(e))}; the traceback is not shown")
        return False


def _fail(message: str) -> int:
    """``symverify: error: MESSAGE`` on standard error (:func:`_say`), and the exit code 3."""
    _say(f"symverify: error: {_visible(message)}")
    return EXIT_ERROR


def _say(line: str) -> None:
    """``line`` on standard error, never raising (:func:`symverify.scripts.whole_file.warn`): a standard
    error that is closed (``2>&-``; Python then has none, and ``print`` would write to standard output) or
    cannot take it (a full disk) is left silent and pointed at the null device, so the exit code alone
    says what happened. An error raised here was Python's exit code 1, which ``verify`` uses for *refuted*."""
    from symverify.scripts.whole_file import warn

    warn(line)


def _to_devnull(stream: Any) -> None:
    """Point ``stream``'s file descriptor at the null device (:func:`symverify.progress.stream_to_devnull`),
    so what is left in it (Python's flush at exit) goes nowhere."""
    from symverify.progress import stream_to_devnull

    stream_to_devnull(stream)


def _out(text: str, stream: Any = None) -> None:
    """``text`` and a line break on standard output (or ``stream``), flushed: a write that fails
    (a full disk, ``> /dev/full``) is an ``OSError`` naming the stream, reported as
    ``symverify: error: standard output: No space left on device``; a closed one (``>&-``) takes nothing.

    A reader that has gone (a broken pipe: ``prove --list | head -1``, ``verify … | grep -q PROVED``)
    took what it wanted: the stream is pointed at the null device (:func:`_to_devnull`, so Python's
    flush at exit says nothing either) and the command ends quietly with its own exit code (0 for
    ``info``, ``compile``, ``report`` and ``--list``, the verdict's for ``verify``), as ``prove`` does;
    it was the input error's code 3, with ``symverify: error: standard output: Broken pipe``, after
    the work was done and its files written."""
    stream = sys.stdout if stream is None else stream
    if stream is None:
        return
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        _to_devnull(stream)
    except OSError as e:
        name = "standard error" if stream is sys.stderr else "standard output"
        _to_devnull(stream)
        raise OSError(e.errno, e.strerror or str(e), name) from None


if __name__ == "__main__":
    raise SystemExit(main())
