import sys

# `python -m rocmlint` puts the current directory first on sys.path. rocmlint is usually run
# in the tree it scans, and a `yaml.py` or `tomli.py` there would be imported in place of
# the real module: it would run the scanned code. Drop that entry, as `python -P` does.
if not sys.flags.safe_path and sys.path and sys.path[0] in ("", ".", __import__("os").getcwd()):
    del sys.path[0]

from rocmlint.cli import main  # noqa: E402

sys.exit(main())
