#!/usr/bin/env python3
"""How much code a call runs: the instructions and 64-byte code lines the gateway executes on every
call, from two callgrind runs of the same binary that differ only in their number of calls.

At one call in flight the load generator, the gateway and the backend take turns on a core, so
each call fetches its code again from a cache the others have been using: what a change costs then
follows the lines of code it adds more than the instructions it adds.

Usage (the wrapper writes callgrind files; see crates/pegboard-load/README.md):

    valgrind --tool=callgrind --dump-instr=yes --dump-line=no ...   # as --gateway-bin
    hot_code.py FEW.raw MANY.raw CALLS                   # CALLS = calls in MANY minus in FEW
    hot_code.py FEW.raw MANY.raw CALLS BASE_FEW.raw BASE_MANY.raw   # and the difference by function

An instruction is "hot" when it ran at least 0.9 times per call more in MANY than in FEW. Function
names need a binary with symbols (`CARGO_PROFILE_RELEASE_STRIP=none`); the counts do not.
"""

import collections
import re
import sys

FN = re.compile(r"c?fn=\((\d+)\)(?: (.*))?")


def costs(path):
    """Instructions executed per (address, function) in one callgrind file."""
    names, cost = {}, collections.Counter()
    function, last, after_call = None, 0, False
    with open(path) as f:
        for line in f:
            if line.startswith(("fn=", "cfn=")):
                m = FN.match(line.rstrip("\n"))
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    function = m.group(1)
                continue
            if line.startswith("calls="):
                after_call = True  # the next line is the call's inclusive cost: not this code's
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            parts = line.split()
            p = parts[0]
            if p == "*":
                addr = last
            elif p[0] in "+-":
                step = int(p[1:], 0)
                addr = last + step if p[0] == "+" else last - step
            else:
                addr = int(p, 0)
            last = addr
            if after_call:
                after_call = False
            elif len(parts) > 1:
                cost[(addr, function)] += int(parts[1])
    return collections.Counter({(a, names.get(f, f)): n for (a, f), n in cost.items()})


def hot(few, many, calls):
    """Per-call counts of the instructions that ran on every call."""
    a, b = costs(few), costs(many)
    return {k: (n - a.get(k, 0)) / calls for k, n in b.items() if n - a.get(k, 0) >= 0.9 * calls}


def by_function(per):
    lines, count = collections.defaultdict(set), collections.Counter()
    for (addr, function), n in per.items():
        lines[function].add(addr >> 6)
        count[function] += n
    return lines, count


def main(argv):
    if len(argv) not in (4, 6):
        sys.exit(__doc__)
    calls = int(argv[3])
    per = hot(argv[1], argv[2], calls)
    lines = {addr >> 6 for addr, _ in per}
    print(f"{len(per)} instructions in {len(lines)} lines of code run on every call; "
          f"{sum(per.values()):.0f} instructions a call")
    if len(argv) == 6:
        base = hot(argv[4], argv[5], calls)
        (l1, c1), (l0, c0) = by_function(per), by_function(base)
        rows = []
        for function in set(l1) | set(l0):
            dl = len(l1.get(function, ())) - len(l0.get(function, ()))
            dc = c1.get(function, 0) - c0.get(function, 0)
            if dl or abs(dc) >= 5:
                rows.append((dl, dc, str(function)))
        base_lines = {addr >> 6 for addr, _ in base}
        print(f"against the base: {len(lines) - len(base_lines):+d} lines, "
              f"{sum(per.values()) - sum(base.values()):+.0f} instructions a call")
        for dl, dc, function in sorted(rows, key=lambda r: (-r[0], -r[1]))[:40]:
            print(f"{dl:+5d} lines {dc:+8.1f} instructions  {function[:120]}")


if __name__ == "__main__":
    main(sys.argv)
