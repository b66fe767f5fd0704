"""``python -m symverify ...``: the command line, as the ``symverify`` script (:func:`symverify.cli.main`).

For an environment whose scripts folder is not on ``PATH`` (``.venv/bin``), or to pick the
interpreter: ``python3.11 -m symverify prove all``.
"""

from symverify.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
