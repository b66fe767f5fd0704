"""Trusted provers: the methods of :func:`symverify.verify`, their bounds and the one door for verdicts."""
