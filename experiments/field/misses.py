#!/usr/bin/env python3
"""List every lie a field-study half let escape, with its cause, and every
false failure, as markdown.

    python3 misses.py results/evaluation/field.jsonl > ../../docs/field-study-misses-evaluation.md
    python3 misses.py FIELD.jsonl --half evaluation --causes causes.toml

The cause is first read from the audit's own reason (the dataset's
`why_missed`):

- planner: no call of the lying tool did what the lie is about (every call
  failed, the answers said they failed, the write form never met an
  existing object, no identical repeat completed);
- not seen: a call did its job and no effect of the kind the lie denies
  was observed;
- controls: the effect was seen, and a control could not reproduce it, so
  it was not charged to the tool;
- other: any other reason.

"Not seen" mixes three causes only a reading of the audit can separate:
the call did not reach the effect (an order or a value the planner chose:
an append where the truth's overwrite needs an existing target, a repeat on
fresh values), the observer did not see it (a format change a cell view
ignores), or the truth names an effect the study never allows (the network,
an index only a command line builds) or is wrong. Those rows, the "other"
rows and the false failures are ruled by hand in `causes.toml` beside this
script (cause planner, observer or ground-truth, and why); a row without a
ruling is shown "unruled", and a ruling that matches no current row is
reported on stderr as stale, so a rerun that moves a row shows it. A
ruling may also place a "planner" or "controls" row whose reading shows
another cause (a licence the study never has, a control that could not
reproduce a first-use write). `[[fix]]` entries and the rulings' `fix`
say which kind of planner change would plausibly reach each planner miss;
a half read for them gets that tally too.

The half is the name of the directory FIELD.jsonl is in
(`results/<half>/field.jsonl`) unless `--half` names it. Every row quotes
the audit's reason, so each class can be checked against the audit it came
from (audits/field-<server>-<tool>-<lie>.json).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tomllib
from collections import Counter

CAUSES = ("planner", "observer", "ground-truth")
FIXES = (
    "names from the store",
    "answer text read",
    "existing target",
    "fresh name",
    "order",
    "mode or flag",
    "structured value",
    "argument shape",
    "the entry's settings",
    "none",
)
KINDS = ("escaped lie", "false failure")
UNREAD = "not read for a fix"
LIE = {"readOnlyHint": "read-only", "destructiveHint": "non-destructive", "idempotentHint": "idempotent"}


def cause(reason: str) -> str:
    """The class the audit's own reason puts an escaped lie in."""
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


def load_rulings(path: pathlib.Path, half: str) -> tuple[dict[tuple[str, str, str, str], dict], dict[tuple[str, str], dict]]:
    """The rulings of one half, keyed by (kind, server, tool, hint), and its
    fix kinds of the lies already under "planner", keyed by (server, tool);
    a malformed entry is an error, not a silent miss."""
    if not path.exists():
        return {}, {}
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    rulings: dict[tuple[str, str, str, str], dict] = {}
    for n, r in enumerate(doc.get("ruling", []), 1):
        missing = [k for k in ("half", "server", "tool", "hint", "cause", "why") if not r.get(k)]
        if missing:
            sys.exit(f"misses.py: {path} ruling {n} lacks {', '.join(missing)}")
        if r["cause"] not in CAUSES:
            sys.exit(f"misses.py: {path} ruling {n} has cause {r['cause']!r}, not one of {', '.join(CAUSES)}")
        kind = r.get("kind", "escaped lie")
        if kind not in KINDS:
            sys.exit(f"misses.py: {path} ruling {n} has kind {kind!r}, not one of {', '.join(KINDS)}")
        if r.get("fix") is not None and r["fix"] not in FIXES:
            sys.exit(f"misses.py: {path} ruling {n} has fix {r['fix']!r}, not one of {', '.join(FIXES)}")
        if r["half"] != half:
            continue
        key = (kind, r["server"], r["tool"], r["hint"])
        if key in rulings:
            sys.exit(f"misses.py: {path} rules {half} {' '.join(key)} twice")
        rulings[key] = r
    fixes: dict[tuple[str, str], dict] = {}
    for n, f in enumerate(doc.get("fix", []), 1):
        missing = [k for k in ("half", "server", "tool", "fix", "why") if not f.get(k)]
        if missing:
            sys.exit(f"misses.py: {path} fix {n} lacks {', '.join(missing)}")
        if f["fix"] not in FIXES:
            sys.exit(f"misses.py: {path} fix {n} has fix {f['fix']!r}, not one of {', '.join(FIXES)}")
        if f["half"] != half:
            continue
        key = (f["server"], f["tool"])
        if key in fixes:
            sys.exit(f"misses.py: {path} gives {half} {' '.join(key)} a fix twice")
        fixes[key] = f
    return rulings, fixes


def cell(text: str, limit: int | None = None) -> str:
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return text


def ruled(r: dict) -> str:
    """A ruling's cause as a table shows it."""
    name = "ground truth" if r["cause"] == "ground-truth" else r["cause"]
    if r.get("truth"):
        name += f" ({r['truth']})"
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description="escaped lies and false failures of a field-study half")
    parser.add_argument("jsonl", metavar="FIELD.jsonl")
    parser.add_argument("--half", help="the half the rulings are read for (default: FIELD.jsonl's directory name)")
    parser.add_argument(
        "--causes",
        default=str(pathlib.Path(__file__).with_name("causes.toml")),
        help="the hand rulings (default: causes.toml beside this script)",
    )
    args = parser.parse_args()
    half = args.half or pathlib.Path(args.jsonl).resolve().parent.name
    rulings, fixes = load_rulings(pathlib.Path(args.causes), half)
    used: set[tuple[str, str, str, str]] = set()
    fixes_used: set[tuple[str, str]] = set()

    rows = [json.loads(line) for line in open(args.jsonl, encoding="utf-8") if line.strip()]
    lies = [r for r in rows if r.get("lie_planted")]
    missed = [r for r in lies if not r.get("caught")]

    def final(r: dict) -> tuple[str, dict | None]:
        """The row's cause for the tally, and the ruling it rests on: a
        ruling wins; without one, the audit's reason places planner and
        controls, and leaves the rest unruled."""
        key = ("escaped lie", r["server"], r["tool"], r["hint"])
        ruling = rulings.get(key)
        if ruling is not None:
            used.add(key)
            return ruling["cause"], ruling
        auto = cause(r.get("why_missed") or "")
        return (auto if auto in ("planner", "controls") else "unruled"), None

    classed = [(r, *final(r)) for r in missed]
    tally = Counter(c for _, c, _ in classed)
    by_hand = Counter(c for _, c, ruling in classed if ruling is not None)
    print(f"Lies planted {len(lies)}, caught {len(lies) - len(missed)}, escaped {len(missed)}.")
    print()
    print("| cause | lies | of which ruled by hand |")
    print("|---|---|---|")
    for name, label in (
        ("planner", "planner"),
        ("observer", "observer"),
        ("ground-truth", "ground truth"),
        ("controls", "controls"),
        ("unruled", "unruled"),
    ):
        print(f"| {label} | {tally.get(name, 0)} | {by_hand.get(name, 0)} |")
    wrong = sum(1 for _, _, ruling in classed if ruling is not None and ruling.get("truth") == "wrong")
    never = sum(1 for _, _, ruling in classed if ruling is not None and ruling.get("truth") == "condition never met")
    if wrong or never:
        print()
        print(
            f"Of the ground truth's: {never} with an effect the study's conditions never allow, "
            f"{wrong} with a truth the ruling finds wrong (not edited here: for the lead to decide)."
        )
    print()

    # Which planner change would plausibly have reached each lie, by the
    # class the audit's own reason put it in: only printed for a half whose
    # lies have been read for it.
    def fix_of(r: dict, name: str, ruling: dict | None) -> str:
        if ruling is not None:
            return ruling.get("fix") or (UNREAD if name == "planner" else f"no planner change: {ruled(ruling)}")
        if name != "planner":
            return UNREAD if name == "unruled" else f"no planner change: {name}"
        f = fixes.get((r["server"], r["tool"]))
        if f is None:
            return UNREAD
        fixes_used.add((r["server"], r["tool"]))
        return f["fix"]

    fixed = Counter((fix_of(r, name, ruling), cause(r.get("why_missed") or "")) for r, name, ruling in classed)
    if fixes or any(ruling.get("fix") for ruling in rulings.values()):
        classes = [c for c in ("planner", "not seen", "controls", "other") if any(k[1] == c for k in fixed)]
        order = list(FIXES) + sorted({k[0] for k in fixed} - set(FIXES))
        print("The planner change that would plausibly have reached each escaped lie (a reading, not a measurement), by the class the audit's own reason put it in:")
        print()
        print("| change | " + " | ".join(f"{c} (audit's reason)" for c in classes) + " | lies |")
        print("|---|" + "---|" * (len(classes) + 1))
        for fix in order:
            counts = [fixed.get((fix, c), 0) for c in classes]
            if sum(counts):
                label = "none: the store or the jail stands in the way" if fix == "none" else fix
                print(f"| {label} | " + " | ".join(str(n) for n in counts) + f" | {sum(counts)} |")
        print()

    false = [
        r
        for r in rows
        if r.get("honest") == "fail" and r.get("declared") is not None and r.get("declared") == r.get("truth")
    ]
    print(f"False failures (an honest audit failed a claim the ground truth says holds): {len(false)}.")
    print()
    for r in false:
        key = ("false failure", r["server"], r["tool"], r["hint"])
        ruling = rulings.get(key)
        line = f"- {r['server']} `{r['tool']}` {r['hint']}: declared {r['declared']}, truth {r['truth']}"
        if ruling is None:
            line += "; cause unruled"
        else:
            used.add(key)
            line += f"; cause **{ruled(ruling)}**: {ruling['why']}"
        print(line)
    if false:
        print()

    print("| server | tool | lie | cause | the audit's reason | read by hand |")
    print("|---|---|---|---|---|---|")
    for r, name, ruling in classed:
        auto = cause(r.get("why_missed") or "")
        f = fixes.get((r["server"], r["tool"])) if ruling is None and name == "planner" else None
        if ruling is not None:
            shown, why = ruled(ruling), cell(ruling["why"] + (f" Fix: {ruling['fix']}." if ruling.get("fix") else ""))
        elif name == "unruled":
            shown, why = f"{auto} (unruled)", ""
        elif f is not None:
            shown, why = name, cell(f"Fix: {f['fix']}: {f['why']}")
        else:
            shown, why = name, ""
        print(
            f"| {r['server']} | `{r['tool']}` | {LIE.get(r['hint'], r['hint'])} | {shown} "
            f"| {cell(r.get('why_missed') or '', 220)} | {why} |"
        )

    for server, tool in sorted(set(fixes) - fixes_used):
        print(
            f"misses.py: stale fix in {args.causes}: {half} {server} `{tool}` "
            "has no escaped lie the audit's reason puts under planner in this run",
            file=sys.stderr,
        )
    for key in sorted(set(rulings) - used):
        kind, server, tool, hint = key
        print(
            f"misses.py: stale ruling in {args.causes}: {half} {server} `{tool}` {hint} ({kind}) "
            "matches no escaped lie or false failure of this run",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
