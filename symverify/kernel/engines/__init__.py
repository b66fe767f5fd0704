"""The torch engine's exact modular path: models and circuits mod 31-bit primes (``modular_eval``)."""
