#!/usr/bin/env python3
"""Print a field-study half's numbers as the markdown tables of docs/field-study.md.

    python3 tables.py results/evaluation/field.json

Every number is read from the document `lab field` wrote (field.json), so
the tables in the docs are the measured ones: the totals, one row per hint,
and one row per server.
"""

from __future__ import annotations

import json
import sys


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: tables.py FIELD.json", file=sys.stderr)
        return 2
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
    t = doc["totals"]
    print(
        f"- **{t['servers_run']} of {t['servers']}** servers ran; {t['tools']} tools listed, "
        f"**{t['tools_exercised']} exercised** ({pct(t['tools_exercised'], t['tools'])}) by the honest audits."
    )
    print(f"- **{t['servers_annotating']} of {t['servers']} servers annotate at all**; {t['tools_annotated']} tools carry annotations.")
    print(
        f"- **{t['lies_planted']} lies planted, {t['lies_caught']} caught "
        f"({pct(t['lies_caught'], t['lies_planted'])})**."
    )
    print(
        f"- **{t['false_failures']} false failures** against the ground truth; "
        f"{t['confirmed_failures']} confirmed failures (a published claim the truth says is wrong, seen broken); "
        f"{t['unjudged_failures']} unjudged."
    )
    print()
    print("| hint | declaring | claims | holds | broken | not tested | lies planted | caught | recall | false failures |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for h in doc["hints"]:
        print(
            f"| `{h['hint']}` | {h['declared']} | {h['claims']} | {h['holds']} | {h['broken']} | {h['untested']} "
            f"| {h['lies_planted']} | {h['lies_caught']} | {pct(h['lies_caught'], h['lies_planted'])} | {h['false_failures']} |"
        )
    print()
    print("| server | kind | from | tools | exercised | annotated | seed calls | lies caught | false failing checks | confirmed failing checks | unjudged failing checks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in doc["servers"]:
        failures = s.get("failures", [])
        judged = lambda kind: sum(1 for f in failures if f.get("judged") == kind)  # noqa: E731
        lies = s.get("lies", [])
        caught = sum(1 for lie in lies if lie.get("caught"))
        tools = s.get("tools")
        tools_n = len(tools) if isinstance(tools, list) else tools
        note = f" (not run: {s['error']})" if s.get("error") else ""
        print(
            f"| {s['id']}{note} | {s.get('kind', '')} | {s.get('registry', '')} | {tools_n} | {s.get('exercised', '')} "
            f"| {s.get('annotated', '')} | {s.get('seed_calls', 0)} | {caught}/{len(lies)} | {judged('false')} "
            f"| {judged('confirmed')} | {judged('unjudged')} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
