#!/usr/bin/env python
"""Write a figure table of README.md or docs/ from a results file (replay.output.tables).

    python scripts/tables.py study --results out/grab/study.json [--write README.md [--name grab]]
    python scripts/tables.py refine --results out/grab_refine/study.json --write README.md
    python scripts/tables.py attribution --results out/grab/attribution.json --write docs/attribution.md
    python scripts/tables.py summarize study out/grab/study.json --out docs/results/grab-lifts.json --made-by "CMD"
    python scripts/tables.py summarize pose_mapping out/a.json out/b.json --out docs/results/x.json --made-by "CMD"
    python scripts/tables.py update README.md docs/*.md       # every generated block (make docs)
    python scripts/tables.py check README.md docs/*.md        # exit 1 naming each stale block

Prints the markdown table; ``--write DOC`` replaces DOC's block ``<!-- table:KIND[:NAME] ... -->``; ``summarize``
writes the results file a block is made from; ``update`` / ``check`` rewrite / name every stale block (run from the
repository root; docs/figures.md). Exit status 1 also for no such block or (``check``) a stale one.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from replay import console
from replay.cli import Parser, run
from replay.errors import DataError, UsageError
from replay.fileio import atomic_write_text
from replay.output.doc_blocks import blocks, stale_blocks, update_text
from replay.output.results_summary import SOURCES, summarize
from replay.output.tables import KINDS, replace_block, table
from replay.results.convert import upgrade_words


def _summarize(argv: list[str]) -> int:
    ap = Parser(prog="tables.py summarize", description="the small results file of a document block")
    ap.add_argument("source", choices=SOURCES)
    ap.add_argument(
        "input", type=Path, nargs="+", help="study / bridge JSON, a pytest --junitxml report; pose_mapping: one or more"
    )
    ap.add_argument("--out", type=Path, required=True, help="e.g. docs/results/grab-lifts.json")
    ap.add_argument("--made-by", required=True, help="the command that wrote INPUT")
    ap.add_argument("--commit", default=None, help="the commit it ran on (default: git HEAD here)")
    ap.add_argument("--date", default=None, help="YYYY-MM-DD (default: today, UTC)")
    a = ap.parse_args(argv)
    if len(a.input) > 1 and a.source != "pose_mapping":
        raise UsageError("input", f"{a.source} takes one input file, got {len(a.input)}")
    path = a.input[0]
    try:
        if a.source == "junit":
            doc = path
        elif a.source == "pose_mapping":
            doc = []
            for path in a.input:  # the one named where one fails
                doc.append(json.loads(path.read_text()))
        else:
            doc = json.loads(path.read_text())
        small = summarize(a.source, doc, made_by=a.made_by, commit=a.commit, date=a.date)
    except FileNotFoundError:
        raise DataError(path, None, "no such file") from None
    except (ValueError, SyntaxError) as e:  # JSONDecodeError and ET.ParseError are among them
        raise DataError(path, None, str(e)) from None
    atomic_write_text(a.out, json.dumps(small, indent=1, sort_keys=True) + "\n")
    console.out(f"wrote {a.out} ({a.out.stat().st_size} bytes) from {', '.join(map(str, a.input))}")
    return 0


def _documents(verb: str, docs: list[str]) -> int:
    if not docs:
        raise UsageError(verb, "name the documents, e.g. README.md docs/*.md")
    root, bad = Path.cwd(), []
    for name in docs:
        p = Path(name)
        text = p.read_text()
        try:
            if verb == "update":
                new = update_text(text, root)
                if new != text:
                    atomic_write_text(p, new)
                console.out(f"{p}: {len(blocks(text))} generated block(s)" + (", rewritten" if new != text else ""))
            else:
                bad += [f"{p}: {b}" for b in stale_blocks(text, root)]
        except ValueError as e:
            raise DataError(p, None, str(e)) from None
    if bad:
        raise DataError(None, None, "stale generated block(s), run `make docs`: " + "; ".join(bad))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] == "summarize":
        return _summarize(args[1:])
    if args and args[0] in ("update", "check"):
        return _documents(args[0], args[1:])
    ap = Parser(description=__doc__.split("\n\n")[0])
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
        body = table(a.kind, upgrade_words(doc))
    except ValueError as e:
        raise DataError(a.results, None, str(e)) from None
    if a.write is None:
        console.out(body, end="")
        return 0
    if "--made-by" in args:  # said once, after the command
        k = args.index("--made-by")
        args = args[:k] + args[k + 2 :]
    command = "python scripts/tables.py " + shlex.join(args)
    if a.made_by:
        command += f" (results: {a.made_by})"
    try:
        text = replace_block(a.write.read_text(), a.kind, command, body=body, name=a.name)
    except ValueError as e:
        raise DataError(a.write, None, str(e)) from None
    atomic_write_text(a.write, text)
    console.out(f"wrote the {a.kind} table of {a.results} into {a.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
