"""``python -m train METHOD GAME [options]``: run the trainer ``train.METHOD`` (e.g. ``dmc``)."""

from __future__ import annotations

import importlib
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m train METHOD GAME [options]   (METHOD: dmc, distill, finetune, pipeline; "
              "python -m train METHOD --help for its options)")
        return 0 if argv else 2
    method = argv.pop(0)
    if not method.isidentifier():
        print(f"unknown training method {method!r}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(f"{__package__}.{method}")
    except ModuleNotFoundError as e:
        if e.name == f"{__package__}.{method}":
            print(f"unknown training method {method!r} (no module train/{method}.py)", file=sys.stderr)
            return 2
        raise
    return module.main(argv)


if __name__ == "__main__":
    sys.exit(main())
