#!/usr/bin/env python3
"""MetaTool (HowieHwong/MetaTool, MIT) -> tools.jsonl + queries.jsonl for the recall test.

    git clone https://github.com/HowieHwong/MetaTool && python3 convert.py MetaTool/dataset .

Tools: dataset/plugin_des.json (199 tools, name -> description). Queries: every 20th row of
dataset/data/all_clean_data.csv (20,614 single-tool queries), in file order.
"""

import csv
import json
import sys
from pathlib import Path

src, out = Path(sys.argv[1]), Path(sys.argv[2])
tools = json.loads((src / "plugin_des.json").read_text(encoding="utf-8"))
with open(out / "tools.jsonl", "w", encoding="utf-8") as f:
    for name, description in tools.items():
        f.write(json.dumps({"name": name, "description": description.strip(), "inputSchema": {"type": "object"}},
                           ensure_ascii=False) + "\n")
rows = list(csv.DictReader(open(src / "data" / "all_clean_data.csv", encoding="utf-8")))
with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
    for i, row in enumerate(rows):
        if i % 20 != 0 or row["Tool"] not in tools:
            continue
        f.write(json.dumps({"id": f"metatool_{i}", "query": row["Query"].strip(), "relevant": [row["Tool"]]},
                           ensure_ascii=False) + "\n")
