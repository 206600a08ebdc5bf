#!/usr/bin/env python3
"""Derive tools.jsonl and queries.jsonl from the BFCL data shipped in the `bfcl-eval` wheel.

Usage: pip download --no-deps bfcl-eval==2026.3.23 && unzip bfcl_eval-*.whl -d w
       python3 convert.py w/bfcl_eval/data .
"""
import collections
import json
import sys

# Single-turn categories whose questions have a ground-truth function, plus the
# irrelevance categories, whose functions only serve as distractors.
ANSWERED = [
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple",
]
DISTRACTORS = ["irrelevance", "live_irrelevance", "live_relevance"]
TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array",
         "String": "string", "HashMap": "object", "ArrayList": "array"}


def to_json_schema(node):
    """BFCL writes Python type names (`dict`, `float`); MCP tools use JSON Schema's."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "type" and isinstance(value, str):
                out[key] = TYPES.get(value, value)
            else:
                out[key] = to_json_schema(value)
        return out
    if isinstance(node, list):
        return [to_json_schema(v) for v in node]
    return node


def last_user_message(question):
    turn = question[0] if question else []
    for message in reversed(turn):
        if message.get("role") == "user":
            return message["content"]
    return None


def main(data, out):
    variants = collections.defaultdict(collections.Counter)
    first_seen = {}
    queries = []
    for category in ANSWERED + DISTRACTORS:
        answers = {}
        if category in ANSWERED:
            with open(f"{data}/possible_answer/BFCL_v4_{category}.json") as f:
                for line in f:
                    d = json.loads(line)
                    answers[d["id"]] = d["ground_truth"]
        with open(f"{data}/BFCL_v4_{category}.json") as f:
            for line in f:
                d = json.loads(line)
                offered = set()
                for fn in d["function"]:
                    key = json.dumps(fn, sort_keys=True)
                    variants[fn["name"]][key] += 1
                    first_seen.setdefault(key, len(first_seen))
                    offered.add(fn["name"])
                if d["id"] not in answers:
                    continue
                relevant = sorted({name for call in answers[d["id"]] for name in call})
                query = last_user_message(d["question"])
                if query and relevant and set(relevant) <= offered:
                    queries.append({"id": d["id"], "query": query, "relevant": relevant})
    # One definition per name (the most frequent variant; they differ in wording only).
    tools = []
    for name, counter in variants.items():
        best = max(counter.items(), key=lambda kv: (kv[1], -first_seen[kv[0]]))[0]
        fn = json.loads(best)
        schema = to_json_schema(fn.get("parameters") or {"type": "object", "properties": {}})
        tools.append({"name": name, "description": fn.get("description", ""), "inputSchema": schema})
    with open(f"{out}/tools.jsonl", "w") as f:
        for tool in tools:
            f.write(json.dumps(tool, ensure_ascii=False, separators=(",", ":")) + "\n")
    with open(f"{out}/queries.jsonl", "w") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(tools)} tools, {len(queries)} queries", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
