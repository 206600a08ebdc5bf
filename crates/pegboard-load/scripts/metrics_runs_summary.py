#!/usr/bin/env python3
"""Mean, standard error and range of `+metrics`' paired CPU difference per gateway, from the log
`metrics_runs.sh` writes (one line per run: number, order, gateway, the harness's row)."""

import collections
import re
import statistics
import sys

ROW = re.compile(r"^(\d+) (\S+) (\S+) .*\| ([+-][\d.]+) vs")


def main(path):
    runs = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                runs[m.group(3)].append(float(m.group(4)))
    for gateway, deltas in runs.items():
        se = statistics.stdev(deltas) / len(deltas) ** 0.5 if len(deltas) > 1 else float("nan")
        print(f"{gateway}: {len(deltas)} runs, {statistics.mean(deltas):+.2f} µs ± {se:.2f} "
              f"(range {min(deltas):+.1f} to {max(deltas):+.1f})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
