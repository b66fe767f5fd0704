"""Trusted gadget piece: the fragment type and the standalone pair its claim is proved on."""
