"""Proof scripts: the protocol every script in ``proofs/`` follows (:mod:`.protocol`), the adapters
that turn a prover's answer into a script's instance (:mod:`.instances`) and the runner behind
``symverify prove`` (:mod:`.runner`)."""
