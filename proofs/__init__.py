"""The proof scripts: one per result of Appendix H (and the background theorems it uses).

Each module follows the protocol of :mod:`symverify.scripts.protocol` (a ``TITLE`` and
``run(quick) -> ProofResult``). ``symverify prove`` finds them here after any install (editable or
not) and runs each in its own process; ``python -m symverify.proofs.NAME [--quick] [--json OUT]``
runs one alone. ``symverify prove --dir DIR`` adds a directory of a user's own scripts.
"""
