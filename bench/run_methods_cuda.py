"""The Python steps of bench/run_methods_cuda.sh (standard library only, any python3):

  pad-vocab FILE SIZE    pads a vocabulary JSON of `rematch synth` (word2idx, idx2word with string keys, idx)
                         with unused words "<unused_N>" up to SIZE words, so the word embedding and its optimizer
                         state have the size of a real data set's (F30K: 8,481 words) while the captions keep
                         the synthetic world's few words.
  l2rm-split-usable RUN_DIR LOG MIN_STEPS
                         exit status 0 when an l2rm run's main epoch rematched (at least a batch of pairs called
                         noisy) and trained at least MIN_STEPS steps, else 1 (the runner then tries another seed).
  report WORK ...        reads the logs and run folders the runner left in WORK and prints the markdown report;
                         --json FILE also writes it as JSON. Exit status 1 when a run failed (exit status neither
                         0 nor the runner's time cap), else 0.

Where the numbers come from: `rematch train --progress plain` ends every epoch with the trainer's summary line
(train/run/progress.h)
    epoch 2/2 done  20 steps  loss 0.4312  1520 pairs/s  time 00:03  <validation ...>
whose pairs/s is the pairs (uotrcl: labelled samples) the epoch's steps consumed over the time from the epoch's
start to its last step: each step ends with its loss read on the host, so the GPU work is inside; the epoch's
set-up (begin_epoch), validation, checkpoints and plots are not. A run stopped by the time cap has no summary
for its last epoch: its plain status line (printed every --log_step steps, speed over the last 20 steps) is used
instead and the row says so.
"""
import argparse
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

SUMMARY = re.compile(r"^epoch (\d+)/(\d+) done  (\d+) steps  loss \S+  (\S+) pairs/s  time \S+")
STATUS = re.compile(r"^epoch (\d+)/(\d+)  step (\d+)/(\d+)  loss \S+  (\S+) pairs/s  ETA \S+")
NO_STEPS = re.compile(r"^epoch (\d+): no steps;")
DEMO_WORLD = re.compile(r"^rematch demo: synthetic image-caption benchmark \((.*)\) in ")
DEMO_TRAINING = re.compile(r"^training (\S+) \.\.\.$")
DEMO_ROW = re.compile(r"^\| (triplet|rcl|l2rm) +\|")

# What the measured (last) epoch of each method's run is, given the runner's epoch flags.
PHASE = {
    "triplet": "epoch 2 of 2",
    "infonce": "epoch 2 of 2",
    "rcl": "epoch 2 of 2",
    "l2rm": "first main epoch (after 1 warm-up epoch): rematch OT + cost net",
    "rcsl": "first mining epoch (after 1 learning epoch): two views + memory bank",
    "rcsl-nc": "first mining epoch (after 1 warm-up epoch), on its Beta-mixture split",
    "uotrcl": "first main epoch (after 1 warm-up epoch): label correction + BHG",
    "ncr": "first co-training epoch (after 1 warm-up epoch): co-divide + nets A and B",
    "decl": "first main epoch (after 1 warm-up epoch): evidential split + loss",
    "crcl": "first main epoch (after 1 warm-up epoch): complementary loss + label update",
}


def pad_vocab(path, size):
    with open(path) as f:
        vocab = json.load(f)
    n = vocab["idx"]
    if n > size:
        sys.exit(f"pad-vocab: {path} already has {n} words, more than the {size} asked for")
    for i in range(n, size):
        word = f"<unused_{i}>"
        vocab["word2idx"][word] = i
        vocab["idx2word"][str(i)] = word
    vocab["idx"] = size
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(vocab, f)
    os.replace(tmp, path)


def l2rm_split_usable(run_dir, log, min_steps):
    """Whether an l2rm run's main epoch (the second) measured what it should: the rematch ran (at least a batch
    of pairs called noisy) and at least min_steps steps (clean pairs) were trained."""
    skipped = any("the rematch loss is skipped" in line for line in read_lines(log))
    stats = epoch_stats(os.path.join(run_dir, "metrics.jsonl"), 2)
    return not skipped and stats.get("steps", 0) >= min_steps


def speed(text):
    """A pairs/s field of a progress line as a number; None for '--' (no measurable time yet)."""
    try:
        return float(text)
    except ValueError:
        return None


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return f.read().replace("\r", "\n").splitlines()


def last_error(lines):
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or [ln for ln in lines if ln.strip()] or ["no output"])[-1].strip()


def parse_epochs(lines):
    """The epoch summaries {epoch: (steps, pairs/s, epochs of the run)}, the last status line (epoch, step,
    pairs/s) and the epochs that had no steps."""
    summaries, status, empty = {}, None, []
    for line in lines:
        m = SUMMARY.match(line)
        if m:
            summaries[int(m.group(1))] = (int(m.group(3)), speed(m.group(4)), int(m.group(2)))
            continue
        m = STATUS.match(line)
        if m:
            status = (int(m.group(1)), int(m.group(3)), speed(m.group(5)))
            continue
        m = NO_STEPS.match(line)
        if m:
            empty.append(int(m.group(1)))
    return summaries, status, empty


def model_text(method, lines, config, dims):
    """A short description of the model from the run's own log line and config.json (the log's model line as
    it is, or "-", when the run stopped before writing its config)."""
    log = "\n".join(lines)
    if not config:
        line = re.search(r"^model: (.*)$", log, re.M)
        return line.group(1) if line else "-"
    params = re.search(r"(\d+) parameters", log)
    params = f", {int(params.group(1)) / 1e6:.1f}M params" if params else ""
    if method == "uotrcl":
        io = re.search(r"dims (\d+)/(\d+)", log)
        io = f"{io.group(1)}/{io.group(2)}" if io else f"{dims['img_dim']}/{dims['txt_dim']}"
        return f"MLP {io} -> {config.get('hidden_dim')} x2 -> {config.get('output_dim')}"
    vocab = re.search(r"V=(\d+)|vocabulary (\d+)", log)
    vocab = f", V {vocab.group(1) or vocab.group(2)}" if vocab else ""
    regions = f"{dims['regions']}x{dims['feature_dim']}"
    if method in ("rcsl", "rcsl-nc"):
        return f"VSE {regions}, embed {config.get('embed_size')}, word {config.get('word_dim')}{vocab}{params}"
    return (f"{config.get('module_name')} {regions}, embed {config.get('embed_size')}, sim {config.get('sim_dim')}, "
            f"word {config.get('word_dim')}{vocab}{params}")


def method_row(work, method, rc, seconds, cap, dims):
    lines = read_lines(os.path.join(work, "logs", f"{method}.log"))
    config = {}
    config_path = os.path.join(work, "runs", method, "config.json")
    if os.path.exists(config_path):
        with open(config_path) as f:
            config = json.load(f)
    summaries, status, empty = parse_epochs(lines)
    row = {"method": method, "model": model_text(method, lines, config, dims), "batch": config.get("batch_size"),
           "seed": config.get("seed"), "exit": rc, "seconds": round(seconds, 1), "phase": PHASE.get(method, ""),
           "steps": None, "epochs": None, "pairs_per_s": None, "first_epoch_pairs_per_s": None, "result": "ok"}
    if 1 in summaries:
        row["first_epoch_pairs_per_s"] = summaries[1][1]
    if summaries:
        last = max(summaries)
        row["steps"], row["pairs_per_s"], row["epochs"] = summaries[last]
        row["measured_epoch"] = last
    if rc == -1:
        row["model"], row["result"] = "-", "not run: the runner's BUDGET was spent"
        return row
    timed_out = rc in (124, 137)
    done = bool(summaries) and row.get("measured_epoch") == row["epochs"]
    if timed_out and done:
        row["result"] = f"ok; stopped by the {cap} s cap after its last epoch (in the final test)"
    elif timed_out:
        row["result"] = f"stopped by the {cap} s cap"
        if status and (not summaries or status[0] > max(summaries)):
            row["measured_epoch"], row["steps"], row["pairs_per_s"] = status
            row["result"] += f" in epoch {status[0]} at step {status[1]} (speed of its last <= 20 steps)"
    elif rc != 0:
        row["result"] = f"failed (exit {rc}): {last_error(lines)}"
    elif empty and (not summaries or max(empty) > max(summaries)):
        row["result"] = f"epoch {max(empty)} had no steps (l2rm: clean set smaller than a batch?)"
        row["pairs_per_s"] = None
    elif not done:
        row["result"] = "no epoch summary in the log"
    stats = epoch_stats(os.path.join(work, "runs", method, "metrics.jsonl"), row.get("measured_epoch"))
    if stats:
        row["epoch_stats"] = stats
    if method == "l2rm" and row["result"].startswith("ok"):
        row["result"] += f" (clean {stats.get('clean_size', 0):.0f} / noisy {stats.get('noisy_size', 0):.0f})"
        if any("the rematch loss is skipped" in line for line in lines):
            row["result"] += ("; the rematch loss was skipped (fewer noisy pairs than a batch), so no OT was "
                              "measured: run it again with another SEED")
    if rc != 0 or row["pairs_per_s"] is None:
        row["log_tail"] = lines[-15:]
    return row


def epoch_stats(path, epoch):
    """The statistics the method gave at the start of 1-based `epoch` (metrics.jsonl's epoch_start record:
    steps, lr, l2rm's clean_size and noisy_size, ...)."""
    for line in read_lines(path):
        rec = json.loads(line)
        if epoch is not None and rec.get("kind") == "epoch_start" and rec.get("epoch") == epoch - 1:
            return {k: v for k, v in rec.items() if k not in ("epoch", "step", "kind")}
    return {}


def eta_seconds(text):
    """The ETA field of a status line ("mm:ss" or "h:mm:ss") in seconds; None for "--:--"."""
    try:
        parts = [int(p) for p in text.split(":")]
    except ValueError:
        return None
    seconds = 0
    for p in parts:
        seconds = 60 * seconds + p
    return seconds


def demo_result(work, rc, seconds, cap, epochs_flag):
    lines = read_lines(os.path.join(work, "logs", "demo.log"))
    demo = {"exit": rc, "seconds": round(seconds, 1), "cap_seconds": cap, "epochs_flag": epochs_flag,
            "world": None, "methods": {}, "table_printed": False}
    current = current_name = None
    # Per method: its finished epochs' steps and the sum of steps / (pairs/s) over them. Every step but an
    # epoch's last has the same batch, so total steps / that sum is the speed in pairs/s over those epochs.
    weights = {}
    for line in lines:
        m = DEMO_WORLD.match(line)
        if m:
            demo["world"] = m.group(1)
        m = DEMO_TRAINING.match(line)
        if m:
            current_name = m.group(1)
            current = demo["methods"].setdefault(current_name, {"epochs_done": 0, "epochs": None, "steps": 0,
                                                                "rsum": None})
            weights[current_name] = 0.0
            continue
        m = SUMMARY.match(line)
        if m and current is not None:
            steps, pps = int(m.group(3)), speed(m.group(4))
            current["epochs_done"] += 1
            current["epochs"] = int(m.group(2))
            current["steps"] += steps
            if pps:
                weights[current_name] += steps / pps
            continue
        m = STATUS.match(line)
        if m and current is not None:
            current["epochs"] = int(m.group(2))
            current["last_status"] = {"epoch": int(m.group(1)), "step": int(m.group(3)),
                                      "steps_in_epoch": int(m.group(4)), "pairs_per_s": speed(m.group(5)),
                                      "eta_seconds": eta_seconds(line.rsplit("ETA ", 1)[1].strip())}
        m = DEMO_ROW.match(line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            demo["methods"].setdefault(m.group(1), {})["rsum"] = float(cells[7])
    for name, m in demo["methods"].items():
        m["pairs_per_s"] = round(m["steps"] / weights[name]) if weights.get(name) else None
    header = any(line.startswith("| method  | i2t R@1") for line in lines)
    demo["table_printed"] = (header and len(demo["methods"]) == 3 and
                             all(m.get("rsum") is not None for m in demo["methods"].values()))
    done = sum(m.get("epochs_done", 0) for m in demo["methods"].values())
    per_method = [m["epochs"] for m in demo["methods"].values() if m.get("epochs")]
    total = 3 * per_method[0] if per_method else None
    demo["epochs_done"], demo["epochs_total"] = done, total
    if demo["table_printed"] and rc == 0:
        demo["result"] = f"table printed after {seconds:.0f} s"
    elif rc in (124, 137):
        demo["result"] = f"stopped by the {cap} s cap after {done} of {total or '?'} epochs (3 methods)"
        first = next(iter(demo["methods"].values()), {})
        status = first.get("last_status")
        if done and total:
            demo["projected_seconds"] = round(seconds / done * total)
            demo["result"] += (f"; the whole demo at this pace: about {seconds / done * total / 60:.0f} min "
                               "(from the epochs done, their evaluation included; l2rm's epochs also split its "
                               "data, so more when only triplet epochs finished)")
        elif status and status["eta_seconds"] is not None:
            # No epoch finished: triplet's own ETA (its training steps only) times the three methods.
            projected = 3 * (seconds + status["eta_seconds"])
            demo["projected_seconds"] = round(projected)
            demo["result"] += (f"; at step {status['step']} of {status['steps_in_epoch']} of its first epoch, "
                               f"{fmt(status['pairs_per_s'])} pairs/s: the whole demo takes more than about "
                               f"{projected / 60:.0f} min (3 x triplet's elapsed time + its ETA, evaluation and "
                               "l2rm's splits not included)")
    else:
        demo["result"] = f"failed (exit {rc}): {last_error(lines)}"
    if not demo["table_printed"]:
        demo["log_tail"] = lines[-15:]
    return demo


def fmt(v, digits=0):
    return "-" if v is None else f"{v:.{digits}f}"


def report(a):
    dims = {"regions": a.regions, "feature_dim": a.feature_dim, "img_dim": a.img_dim, "txt_dim": a.txt_dim}
    # The manifest has a line per run; a name run again (l2rm with another seed) counts its last run.
    runs = {}
    with open(os.path.join(a.work, "manifest.tsv")) as f:
        for line in f.read().splitlines():
            name, rc, seconds, cap = line.split("\t")
            runs.setdefault(name, []).append((int(rc), float(seconds), int(cap)))
    rows, demo = [], None
    for name, tries in runs.items():
        rc, seconds, cap = tries[-1]
        if name == "demo":
            demo = demo_result(a.work, rc, seconds, cap, a.demo_epochs)
            continue
        row = method_row(a.work, name, rc, seconds, cap, dims)
        row["runs"] = len(tries)
        if len(tries) > 1:
            row["result"] += (f"; seed {row['seed']}, after {len(tries) - 1} run(s) whose split did not rematch or "
                              f"gave too few steps ({sum(t[1] for t in tries[:-1]):.0f} s)")
        rows.append(row)

    lines = [f"Device: {a.gpu}; commit {a.commit}; {datetime.date.today().isoformat()}; build {a.build}."]
    if rows:
        lines += ["", f"`rematch train --device {a.device}` throughput per method, {a.dims} model size, synthetic "
                  "data:", ""]
        table = [[r["method"], r["model"], fmt(r["batch"]), fmt(r["steps"]), fmt(r["pairs_per_s"]),
                  fmt(r["first_epoch_pairs_per_s"]), fmt(r["seconds"], 1), r["result"]] for r in rows]
        lines += compare.markdown_table(["method", "model", "batch", "steps", "pairs/s", "epoch 1 pairs/s",
                                         "seconds", "result"], table)
        lines += ["", f"Data: {a.data}.",
                  f"Each run: 2 epochs of at most {a.steps} steps (--max_steps). pairs/s: the trainer's summary of "
                  "the run's last epoch (train/run/progress.h: pairs, or uotrcl's labelled samples, consumed by "
                  "the epoch's steps over the time from the epoch's start to its last step; every step reads its "
                  "loss on the host, so its GPU work is inside; the epoch's set-up, validation and checkpoints "
                  "are not). That epoch is the method's main phase: " +
                  "; ".join(f"{r['method']}: {r['phase']}" for r in rows) + ". steps: the steps of that epoch. "
                  "epoch 1 pairs/s: the first epoch, whose first steps carry the device's start-up. seconds: the "
                  "whole `rematch train` command (start-up, data loading, both epochs, validation, checkpoints, "
                  "test)."]
    if demo:
        lines += ["", f"`rematch demo --device {a.device}`"
                  f"{' --epochs ' + a.demo_epochs if a.demo_epochs else ' (its own epochs)'}: {demo['result']}. "
                  f"World: {demo['world'] or '?'}.", ""]
        lines += compare.markdown_table(
            ["demo method", "epochs done", "steps", "pairs/s", "test rSum"],
            [[k, f"{m.get('epochs_done', 0)}/{m.get('epochs') or '?'}", m.get("steps", 0), fmt(m.get("pairs_per_s")),
              fmt(m.get("rsum"), 1)] for k, m in demo["methods"].items()])
    failed = [r for r in rows if r["exit"] not in (0, 124, 137, -1)]
    if demo and demo["exit"] not in (0, 124, 137):
        failed.append(demo)
    for r in rows + ([demo] if demo else []):
        if "log_tail" in r:
            lines += ["", f"Log tail of {r.get('method', 'demo')}:", "```"] + r["log_tail"] + ["```"]
    print("\n".join(lines))

    if a.json:
        checks = [{"family": "train", "case": r["method"], "value": r["pairs_per_s"], "target": None,
                   "verdict": "ran" if r["exit"] == 0 and r["pairs_per_s"] is not None else r["result"]}
                  for r in rows]
        if demo:
            checks.append({"family": "demo", "case": "table", "value": demo["seconds"], "target": None,
                           "verdict": "table printed" if demo["table_printed"] else demo["result"]})
        compare.write_json(a.json, {
            "context": {"device": a.device, "gpu": a.gpu, "dims": a.dims, "steps_per_epoch": a.steps,
                        "commit": a.commit, "date": datetime.date.today().isoformat(), "build": a.build,
                        "data": a.data},
            "rows": rows, "demo": demo, "checks": checks, "report": lines})
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    pv = sub.add_parser("pad-vocab")
    pv.add_argument("file")
    pv.add_argument("size", type=int)
    ls = sub.add_parser("l2rm-split-usable")
    ls.add_argument("run_dir")
    ls.add_argument("log")
    ls.add_argument("min_steps", type=int)
    r = sub.add_parser("report")
    r.add_argument("work")
    for flag in ("device", "dims", "gpu", "commit", "build", "data"):
        r.add_argument("--" + flag, required=True)
    for flag in ("steps", "regions", "feature_dim", "img_dim", "txt_dim"):
        r.add_argument("--" + flag, type=int, required=True)
    r.add_argument("--demo_epochs", default="")
    r.add_argument("--json", default="")
    a = p.parse_args()
    if a.command == "pad-vocab":
        pad_vocab(a.file, a.size)
        return 0
    if a.command == "l2rm-split-usable":
        return 0 if l2rm_split_usable(a.run_dir, a.log, a.min_steps) else 1
    return report(a)


if __name__ == "__main__":
    sys.exit(main())
