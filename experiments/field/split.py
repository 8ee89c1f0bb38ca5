#!/usr/bin/env python3
"""Split the field study's servers into a development half and an evaluation half.

    python3 split.py            # writes split.json beside this file

A seeded shuffle stratified by kind (issues 39 and 40): within each kind,
the servers' ids are sorted, shuffled by one `random.Random(SEED)` walked
through the kinds in sorted order, and the first floor(n/2) go to
development, the rest to evaluation (an odd kind's extra server goes to
evaluation). The planner is built on the development half only; the
evaluation half is run at the end and reported apart. This split is
committed before any planner change and never redrawn.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from servers_table import SERVERS

SEED = 3940
HERE = Path(__file__).resolve().parent


def split(servers: list[dict], seed: int = SEED) -> dict:
    by_kind: dict[str, list[str]] = {}
    for server in servers:
        by_kind.setdefault(server["kind"], []).append(server["id"])
    rng = random.Random(seed)
    kinds = {}
    for kind in sorted(by_kind):
        ids = sorted(by_kind[kind])
        rng.shuffle(ids)
        half = len(ids) // 2
        kinds[kind] = {"development": sorted(ids[:half]), "evaluation": sorted(ids[half:])}
    return {
        "schema": "mcp-witness.field-split/v1",
        "seed": seed,
        "method": "per kind: ids sorted, shuffled by random.Random(seed) walked through the kinds in sorted order; "
                  "the first floor(n/2) to development, the rest to evaluation",
        "kinds": kinds,
        "development": sorted(i for k in kinds.values() for i in k["development"]),
        "evaluation": sorted(i for k in kinds.values() for i in k["evaluation"]),
    }


def main() -> int:
    result = split(SERVERS)
    (HERE / "split.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"development {len(result['development'])}, evaluation {len(result['evaluation'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
