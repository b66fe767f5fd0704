"""The trusted base: every module a ``proved`` or ``refuted`` verdict rests on (docs/trusted-base.md).

Nothing outside this package can turn a false claim into ``proved`` or a true one into ``refuted``.
The package imports nothing from the rest of symverify except the leaf modules named in the import
contract *the kernel is closed* (pyproject.toml): errors, the deadline, progress display, the version
string, and the size limits and integer text of :mod:`symverify.ir`.

* :mod:`.ir`: the circuit, model, kaleidoscope and certificate IR, exact scalars and their validation;
* :mod:`.semantics`: the definition of a circuit's and a model's value over any ring;
* :mod:`.provers`: the methods, their bounds, the one door for verdicts (:mod:`.provers.outcome`);
* :mod:`.parametric`: gadgets defined for all sizes, their symbolic and concrete interpretations;
* :mod:`.engines`: the torch engine's exact evaluation mod 31-bit primes;
* :mod:`.kaleidoscope`: exact matrices of kaleidoscopes and linear circuits (exact-matrix);
* :mod:`.gadgets`: the standalone pair a fragment's claim is proved on;
* :mod:`.verification`: :func:`~symverify.kernel.verification.verify`, which re-checks every result;
* :mod:`.primes`: deterministic primality of every modulus.

Nothing is imported here, so importing one kernel module loads only what it needs.
"""
