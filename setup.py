"""Package layout (everything else is in pyproject.toml).

The proof scripts live at the top level of the repository (``proofs/``), where a reader looks for them, and ship
in the wheel as the package ``symverify.proofs`` (one copy, through the ``package_dir`` mapping).
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["symverify", "symverify.*"]), "symverify.proofs"],
    package_dir={"symverify.proofs": "proofs"},
)
