"""Trusted kaleidoscope pieces: exact materialisation, circuit matrices, sparse matrices, factor lists."""
