#!/usr/bin/env python3
"""List every lie a field-study half let escape, with its cause, and every
false failure, as markdown.

    python3 misses.py results/evaluation/field.jsonl > ../../docs/field-study-misses-evaluation.md

The cause is read from the audit's own reason (the dataset's `why_missed`),
never judged by hand, in four classes:

- planner: no call of the lying tool did what the lie is about (every call
  failed, the answers said they failed, the write form never met an
  existing object, no identical repeat completed);
- not seen: a call did its job and no effect of the kind the lie denies
  was observed. The ground truth says the tool has that effect, so either
  the call did not reach it (an order or a value the planner chose: an
  append where the truth's overwrite needs an existing target, a repeat
  on fresh values), the observer did not see it (a format change a cell
  view ignores), or the truth names a condition the study never meets
  (the network, an index only a command line builds);
- controls: the effect was seen, and a control could not reproduce it, so
  it was not charged to the tool;
- other: any other reason, quoted.

Every row quotes the reason, so each class can be checked against the
audit it came from (audits/field-<server>-<tool>-<lie>.json).
"""

from __future__ import annotations

import json
import sys
from collections import Counter


def cause(reason: str) -> str:
    r = reason or ""
    if r.startswith("pass:"):
        return "not seen"
    if "effect not reproduced" in r:
        return "controls"
    planner_marks = (
        "every call failed",
        "no call did its job",
        "never did its job",
        "no identical repeat completed",
        "not exercised",
        "was never called",
        "left out",
    )
    if any(m in r for m in planner_marks):
        return "planner"
    return "other"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: misses.py FIELD.jsonl", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    missed = [r for r in rows if r.get("lie_planted") and not r.get("caught")]
    lies = [r for r in rows if r.get("lie_planted")]
    tally = Counter(cause(r.get("why_missed") or "") for r in missed)
    print(f"Lies planted {len(lies)}, caught {len(lies) - len(missed)}, escaped {len(missed)}.")
    print()
    print("| cause | lies |")
    print("|---|---|")
    for name in ("planner", "not seen", "controls", "other"):
        print(f"| {name} | {tally.get(name, 0)} |")
    print()
    false = [
        r
        for r in rows
        if r.get("honest") == "fail" and r.get("declared") is not None and r.get("declared") == r.get("truth")
    ]
    print(f"False failures (an honest audit failed a claim the ground truth says holds): {len(false)}.")
    print()
    for r in false:
        print(f"- {r['server']} `{r['tool']}` {r['hint']}: declared {r['declared']}, truth {r['truth']}")
    if false:
        print()
    print("| server | tool | lie | cause | the audit's reason |")
    print("|---|---|---|---|---|")
    kind = {"readOnlyHint": "read-only", "destructiveHint": "non-destructive", "idempotentHint": "idempotent"}
    for r in missed:
        reason = (r.get("why_missed") or "").replace("|", "\\|").replace("\n", " ")
        if len(reason) > 220:
            reason = reason[:220] + "…"
        print(f"| {r['server']} | `{r['tool']}` | {kind.get(r['hint'], r['hint'])} | {cause(r.get('why_missed') or '')} | {reason} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
