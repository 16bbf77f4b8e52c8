"""Generated figure blocks of README.md and docs/*.md, remade from checked-in results files::

    <!-- table:KIND:NAME from docs/results/FILE.json -->
    | generated table |
    _generated from docs/results/FILE.json: made by `COMMAND`, commit C, DATE_
    <!-- /table:KIND:NAME -->

``KIND``: a table of :mod:`replay.output.tables`; ``FILE.json``: a :mod:`replay.output.results_summary` file, relative
to the repository root (``root``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from replay.output.tables import table

BLOCK = re.compile(
    r"(?P<ind>[ \t]*)<!-- table:(?P<kind>[\w-]+):(?P<name>[\w.-]+) from (?P<src>[\w./-]+\.json) -->\n"
    r"(?P<body>.*?)(?P=ind)<!-- /table:(?P=kind):(?P=name) -->",
    re.S,
)


def _load(root: Path, src: str) -> dict:
    """The results file ``src`` (relative to ``root``). Raises ValueError: missing or not JSON."""
    p = root / src
    try:
        return json.loads(p.read_text())
    except FileNotFoundError:
        raise ValueError(f"{src}: no such results file (docs/figures.md: how it is made)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{src}: not JSON ({e.msg}, line {e.lineno})") from None


def provenance(src: str, doc: dict) -> str:
    return (
        f"_generated from `{src}`: made by `{doc.get('made_by', '?')}`, commit {doc.get('commit', '?')}, "
        f"{doc.get('date', '?')}_\n"
    )


def render(kind: str, src: str, root: Path) -> str:
    """The body of a block of ``kind`` from ``src``; ValueError: the file missing or not of the kind."""
    doc = _load(root, src)
    try:
        body = table(kind, doc)
    except ValueError as e:
        raise ValueError(f"{src}: {e}") from None
    return body + "\n" + provenance(src, doc)


def _indent(ind: str, text: str) -> str:
    return "".join((ind + ln if ln else ln) + "\n" for ln in text.splitlines())


def update_text(text: str, root: Path) -> str:
    """``text`` with every generated block rewritten from its results file. Raises ValueError (see :func:`render`)."""

    def block(m: re.Match) -> str:
        ind, kind, name, src = m["ind"], m["kind"], m["name"], m["src"]
        return (
            f"{ind}<!-- table:{kind}:{name} from {src} -->\n{_indent(ind, render(kind, src, root))}"
            f"{ind}<!-- /table:{kind}:{name} -->"
        )

    return BLOCK.sub(block, text)


def blocks(text: str) -> list[tuple[str, str, str]]:
    return [(m["kind"], m["name"], m["src"]) for m in BLOCK.finditer(text)]


def stale_blocks(text: str, root: Path) -> list[str]:
    """``kind:name`` of each block whose body differs from what its file makes (or with the reason it cannot)."""
    out = []
    for m in BLOCK.finditer(text):
        try:
            want = _indent(m["ind"], render(m["kind"], m["src"], root))
        except ValueError as e:
            out.append(f"{m['kind']}:{m['name']} ({e})")
            continue
        if m["body"] != want:
            out.append(f"{m['kind']}:{m['name']}")
    return out
