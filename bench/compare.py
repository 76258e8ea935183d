"""Shared pieces of the benchmark reports of bench/run_*.sh: reading Google Benchmark JSON and baseline JSON
lines, formatting times, markdown tables (the ratio table against one baseline among them), target verdicts
and a JSON summary. A runner's report imports it with sys.path.insert(0, "<repo>/bench"); nothing here knows
a particular benchmark.
"""
import json

TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Fields of a Google Benchmark row that are not user counters.
_GBENCH_FIELDS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
                  "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index",
                  "aggregate_name", "aggregate_unit", "error_occurred", "error_message"}


def load_gbench(path, with_args=False):
    """(results, context) of a Google Benchmark JSON file. results maps each case (the name before the first
    '/') to {"seconds": ..., <counter>: ...}: the median aggregate when the binary ran repetitions, else the
    single run; with_args, also "args": the rest of the name split at '/' (e.g. ["B:32", "real_time"]).
    context is the binary's "context" object (host, plus custom context such as the device)."""
    with open(path) as f:
        data = json.load(f)
    results, aggregated = {}, set()
    for row in data.get("benchmarks", []):
        case, *args = row.get("run_name", row["name"]).split("/")
        if row.get("run_type") == "aggregate":
            if row.get("aggregate_name") != "median":
                continue
            aggregated.add(case)
        elif case in aggregated:
            continue
        entry = {"seconds": row["real_time"] * TO_SECONDS[row.get("time_unit", "ns")]}
        entry.update({k: v for k, v in row.items() if k not in _GBENCH_FIELDS and isinstance(v, (int, float))})
        if with_args:
            entry["args"] = args
        results[case] = entry
    return results, data.get("context", {})


def load_jsonl(path):
    """The JSON objects of a file with one per line (a baseline script's output)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fmt_time(seconds):
    """A time with a unit that keeps 3-4 significant digits: 12.3 us, 4.567 ms, 1.23 s."""
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds:.2f} s"


def verdict(value, target):
    """'met' / 'missed' for value >= target, 'no baseline' when value is None."""
    if value is None:
        return "no baseline"
    return "met" if value >= target else "missed"


def markdown_table(header, rows):
    """A markdown table as a list of lines: the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def ratio_table(rematch, baseline, baseline_name, target, fmt):
    """The lines of a markdown table of each rematch case against one baseline: case, both times, ratio =
    baseline time / rematch time (> 1: rematch is faster), the target the ratio must reach (target(case)) and
    whether it does, then an empty line and "<n> of <cases> targets met". rematch and baseline map cases to
    seconds; fmt formats a time. A case the baseline lacks says "no baseline" and does not count as missed."""
    lines = [f"| case | rematch | {baseline_name} | ratio ({baseline_name}/rematch) | target | met |",
             "|---|---:|---:|---:|---:|---|"]
    missed = 0
    for case, ours in rematch.items():
        if case not in baseline:
            lines.append(f"| {case} | {fmt(ours)} | - | - | - | no baseline |")
            continue
        ratio = baseline[case] / ours
        met = ratio >= target(case)
        missed += not met
        lines.append(f"| {case} | {fmt(ours)} | {fmt(baseline[case])} | {ratio:.2f} | >= {target(case):.1f} | "
                     f"{'met' if met else 'missed'} |")
    return lines + ["", f"{len(rematch) - missed} of {len(rematch)} targets met"]


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
