#!/usr/bin/env python3
"""Whether audits made inside the image and outside it wrote the same verdicts.

    same_verdicts.py OUTSIDE INSIDE

Each argument is an audit document (audit.json) or a directory that `lab`
wrote (its audits/*.json are compared one by one, the same names on both
sides, and any other *.json in it, e1.json for one, must be equal byte for
byte: the experiment's scores are the verdicts summed up).

Per audit, what must be equal: whether it completed, its exit code, its
isolation level, the target (the package's pinned version and integrity),
every check of both lanes (id, tool, verdict, reason, evidence), every
finding and the summary. Each layer's detail may differ (a cgroup outside,
a resource limit inside the container: both bound the server, in different
words); a layer that held on one side only is printed as a note. Exit 0
when everything is equal, 1 otherwise, naming the first difference of each
audit; 2 on bad arguments.
"""
import json
import pathlib
import sys

VERDICT_FIELDS = ("complete", "exit_code", "target", "checks", "response", "findings", "summary")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def first_difference(a, b, where):
    """The path of the first place where a and b differ, or None."""
    if type(a) is not type(b):
        return where
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key}"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return f"{where} (length {len(a)} outside, {len(b)} inside)" if len(a) != len(b) else None
    return None if a == b else where


def compare_audit(name, outside, inside):
    """Problems (each a line) and notes for one audit."""
    problems, notes = [], []
    for field in VERDICT_FIELDS:
        where = first_difference(outside.get(field), inside.get(field), field)
        if where:
            problems.append(f"{name}: {where} differs")
    level_out = outside.get("isolation", {}).get("level")
    level_in = inside.get("isolation", {}).get("level")
    if level_out != level_in:
        problems.append(f"{name}: isolation.level is {level_out} outside, {level_in} inside")
    held_out = {l["layer"]: l["held"] for l in outside.get("isolation", {}).get("layers", [])}
    held_in = {l["layer"]: l["held"] for l in inside.get("isolation", {}).get("layers", [])}
    for layer in sorted(set(held_out) | set(held_in)):
        if held_out.get(layer) != held_in.get(layer):
            notes.append(
                f"{name}: layer {layer} held {held_out.get(layer)} outside, {held_in.get(layer)} inside"
            )
    return problems, notes


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    outside, inside = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    problems, notes, compared = [], [], 0
    if outside.is_dir() != inside.is_dir():
        print("same_verdicts.py: give two audit documents or two lab directories", file=sys.stderr)
        return 2
    if outside.is_dir():
        names_out = sorted(p.name for p in (outside / "audits").glob("*.json"))
        names_in = sorted(p.name for p in (inside / "audits").glob("*.json"))
        if names_out != names_in:
            problems.append(f"audits differ: {names_out} outside, {names_in} inside")
        if not names_out:
            problems.append(f"no audits in {outside / 'audits'}")
        for name in sorted(set(names_out) & set(names_in)):
            p, n = compare_audit(
                name, load(outside / "audits" / name), load(inside / "audits" / name)
            )
            problems += p
            notes += n
            compared += 1
        for scores in sorted(p.name for p in outside.glob("*.json")):
            other = inside / scores
            if not other.exists():
                problems.append(f"{scores}: not written inside")
            elif (outside / scores).read_bytes() != other.read_bytes():
                problems.append(f"{scores}: not the same bytes inside and outside")
    else:
        p, n = compare_audit(outside.name, load(outside), load(inside))
        problems += p
        notes += n
        compared += 1
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(f"DIFFERENT: {problem}")
    if problems:
        return 1
    print(f"same verdicts inside and outside: {compared} audit(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
