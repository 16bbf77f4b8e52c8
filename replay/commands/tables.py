#!/usr/bin/env python
"""Write a figure table of README.md or docs/ from a results file (replay.output.tables).

    python scripts/tables.py study --results out/grab/study.json [--write README.md [--name grab]]
    python scripts/tables.py refine --results out/grab_refine/study.json --write README.md
    python scripts/tables.py attribution --results out/grab/attribution.json --write docs/attribution.md

Prints the markdown table; with ``--write DOC`` replaces the block between
``<!-- table:KIND[:NAME] ... -->`` and ``<!-- /table:KIND[:NAME] -->`` in DOC, the opening comment
naming this command (and ``--made-by``, the command that wrote the results file). Exit status
(replay.cli): 0 done, 1 a file missing or unreadable or no such block, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from replay.cli import run
from replay.errors import DataError
from replay.fileio import atomic_write_text
from replay.output.tables import KINDS, replace_block, table
from replay.results.outcomes import upgrade


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("--results", type=Path, required=True, help="the results JSON the table is made from")
    ap.add_argument("--write", type=Path, default=None, help="document whose table block is replaced")
    ap.add_argument("--name", default=None, help="the block's name where DOC holds several of this kind")
    ap.add_argument("--made-by", default=None, help="the command that wrote the results file (kept in the comment)")
    a = ap.parse_args(argv)
    try:
        doc = json.loads(a.results.read_text())
    except json.JSONDecodeError as e:
        raise DataError(a.results, None, f"not JSON ({e.msg}, line {e.lineno})") from None
    try:
        body = table(a.kind, upgrade(doc))  # a format-1 file's words mapped (replay.results.outcomes)
    except ValueError as e:
        raise DataError(a.results, None, str(e)) from None
    if a.write is None:
        print(body, end="")
        return 0
    args = sys.argv[1:] if argv is None else list(argv)
    if "--made-by" in args:  # said once, after the command
        k = args.index("--made-by")
        args = args[:k] + args[k + 2:]
    command = "python scripts/tables.py " + shlex.join(args)
    if a.made_by:
        command += f" (results: {a.made_by})"
    try:
        text = replace_block(a.write.read_text(), a.kind, command, body, a.name)
    except ValueError as e:
        raise DataError(a.write, None, str(e)) from None
    atomic_write_text(a.write, text)
    print(f"wrote the {a.kind} table of {a.results} into {a.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
