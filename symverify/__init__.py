"""symverify: machine-checked expressivity theory of BaseConv (Zoology, Appendix H)."""
from symverify._version import __version__
