"""Trusted parametric pieces: expressions, gadgets and their symbolic and concrete interpretations."""
