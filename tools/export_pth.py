#!/usr/bin/python3
"""Exports a rematch SGR/SAF checkpoint as an official SGRAF-format PyTorch checkpoint (.pth.tar).

Usage:  /usr/bin/python3 tools/export_pth.py CHECKPOINT.safetensors OUT.pth.tar
            [--data_name f30k_precomp] [--data_path DIR] [--vocab_path DIR]

Input: the checkpoint of `rematch init-checkpoint` (metadata format "rematch.training_checkpoint") or of a
`rematch train` run of an SGR/SAF method ("rematch.training_state"): tensors "model.<name>" and the model's
shape in the metadata "model_config". Output: what the official train.py saves (docs/backbones.md §8.1),
  {'model': [img_enc, txt_enc, sim_enc state dicts], 'opt': argparse.Namespace, 'epoch', 'best_rsum', 'Eiters'}
with the official names and shapes (§4.9; rematch uses the same), so the official evaluation
(torch.load, SGRAF(opt), model.load_state_dict(checkpoint['model'])) loads it unchanged, and
tools/convert_pth.py turns it back into the same tensors, bit for bit. 'opt' holds every option of the
official opts.py: the model's sizes from model_config, the data set from the flags, the rest opts.py's
defaults. The official VisualSA hard-codes 36 regions (§4.1), so a model of another region count is refused.
A `rematch train --method ncr` checkpoint holds two nets, A ("model.<name>") and B ("model_B.<name>"); it is written
as NCR's `co_train.py: main` saves (XLearning-SCU/2021-NeurIPS-NCR, docs/methods/ncr.md §6),
  {'epoch', 'model_A': [3 state dicts], 'model_B': [3 state dicts], 'best_rsum', 'opt'},
with 'opt' every option of NCR's `run.py` at its default but the model's sizes and the data set, so NCR's
`evaluation.py: evalrank` loads it; convert_pth.py --model A | B reads each net back.
A user error prints one line per problem and exits with status 2; the file is written atomically.
"""
import argparse
import json
import os
import struct
import sys
from collections import OrderedDict

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_output  # noqa: E402
from sgraf_layout import LayoutError, check_model  # noqa: E402

FORMATS = ("rematch.training_checkpoint", "rematch.training_state")
DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "BOOL": "|b1", "U8": "|u1"}
OFFICIAL_REGIONS = 36  # SGRAF model.py: VisualSA(embed_size, 0.4, 36)
# SGRAF opts.py, every option with its default (docs/backbones.md §8.1); the model's sizes are overwritten.
OPTS_DEFAULTS = OrderedDict([
    ("data_path", "./data/"), ("data_name", "f30k_precomp"), ("vocab_path", "./vocab/"),
    ("model_name", "./runs/model"), ("logger_name", "./runs/log"), ("batch_size", 128), ("num_epochs", 40),
    ("lr_update", 30), ("learning_rate", 0.0002), ("workers", 10), ("log_step", 10), ("val_step", 1000),
    ("grad_clip", 2.0), ("margin", 0.2), ("max_violation", True), ("img_dim", 2048), ("word_dim", 300),
    ("embed_size", 1024), ("sim_dim", 256), ("num_layers", 1), ("bi_gru", True), ("no_imgnorm", False),
    ("no_txtnorm", False), ("module_name", "SGR"), ("sgr_step", 3)])
# NCR run.py, every option with its default (the random --seed as 0, --output_dir without its time stamp).
NCR_OPTS_DEFAULTS = OrderedDict([
    ("data_path", "/data/NCR-data/data"), ("data_name", "f30k_precomp"), ("vocab_path", "/data/NCR-data/vocab"),
    ("batch_size", 128), ("num_epochs", 40), ("lr_update", 30), ("learning_rate", 0.0002), ("workers", 0),
    ("log_step", 100), ("grad_clip", 2.0), ("margin", 0.2), ("img_dim", 2048), ("word_dim", 300),
    ("embed_size", 1024), ("sim_dim", 256), ("num_layers", 1), ("bi_gru", True), ("no_imgnorm", False),
    ("no_txtnorm", False), ("module_name", "SGR"), ("sgr_step", 3), ("noise_file", ""), ("noise_ratio", 0.2),
    ("no_co_training", False), ("warmup_epoch", 1), ("warmup_model_path", ""), ("p_threshold", 0.5),
    ("soft_margin", "exponential"), ("gpu", "0"), ("seed", 0), ("output_dir", "output")])


def fail(*messages):
    tool_output.fail("export_pth", *messages)


def read_safetensors(path):
    """(metadata, OrderedDict name -> numpy array) of a safetensors file, errors naming it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")
    if data[:4] == b"PK\x03\x04" or (data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")):
        fail(f"'{path}' is already a PyTorch checkpoint; export_pth reads rematch's .safetensors checkpoints")
    if len(data) < 8 or struct.unpack("<Q", data[:8])[0] > len(data) - 8:
        fail(f"'{path}' is not a safetensors file (its 8-byte header length does not fit the file)")
    n = struct.unpack("<Q", data[:8])[0]
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        fail(f"'{path}': the safetensors header is not valid JSON: {e}")
    meta = header.pop("__metadata__", {}) or {}
    tensors = OrderedDict()
    for name, info in header.items():
        begin, end = info["data_offsets"]
        if info["dtype"] not in DTYPES:
            fail(f"'{path}': tensor {name} has dtype {info['dtype']}, which export_pth does not handle")
        tensors[name] = np.frombuffer(data, dtype=DTYPES[info["dtype"]], count=(end - begin) //
                                      np.dtype(DTYPES[info["dtype"]]).itemsize,
                                      offset=8 + n + begin).reshape(info["shape"])
    return meta, tensors


def model_of(path, meta, tensors):
    """(model_config dict, OrderedDict official name -> array) of a rematch SGR/SAF checkpoint."""
    if meta.get("format") not in FORMATS or "model_config" not in meta:
        if any(name.startswith(("img_enc.", "txt_enc.", "sim_enc.")) for name in tensors):
            fail(f"'{path}' was converted from an official checkpoint by convert_pth.py; its original .pth.tar is "
                 "the official file")
        fail(f"'{path}' is not a rematch checkpoint of an SGR/SAF model (metadata format {FORMATS[0]!r} from "
             f"`rematch init-checkpoint`, or {FORMATS[1]!r} with a model_config from `rematch train`)")
    config = json.loads(meta["model_config"])
    if config.get("model", "sgraf") != "sgraf":
        fail(f"'{path}' holds a {config.get('model')!r} model; only SGR/SAF models have an official format")
    state = OrderedDict((name[len("model."):], t) for name, t in tensors.items() if name.startswith("model."))
    return config, state


def ncr_net_b(tensors):
    """Net B of an NCR checkpoint ("model_B.<name>"), or None for a one-model checkpoint."""
    state = OrderedDict((name[len("model_B."):], t) for name, t in tensors.items() if name.startswith("model_B."))
    return state or None


def official_dicts(state):
    dicts = [OrderedDict(), OrderedDict(), OrderedDict()]
    for name, t in state.items():
        part = ("img_enc.", "txt_enc.", "sim_enc.").index(name[:8])
        dicts[part][name[8:]] = torch.from_numpy(np.array(t))  # a writable copy, same dtype and bytes
    return dicts


def options(config, args, defaults=OPTS_DEFAULTS):
    opt = OrderedDict(defaults)
    for key in ("img_dim", "word_dim", "embed_size", "sim_dim", "module_name", "sgr_step"):
        opt[key] = config[key]
    opt["vocab_size"] = config["vocab_size"]  # the official evaluation sets it from the vocabulary file
    for key in ("data_name", "data_path", "vocab_path"):
        if getattr(args, key) is not None:
            opt[key] = getattr(args, key)
    return argparse.Namespace(**opt)


def completed_epochs(meta):
    """The official 'epoch': epochs completed (SGRAF's and RCL's train.py save epoch + 1). rematch's trainer.epoch is
    the 0-based epoch in progress, finished when trainer.epoch_done is 1; an init-checkpoint file has neither: 0."""
    if "trainer.epoch" not in meta:
        return 0
    return integer_entry(meta, "trainer.epoch") + integer_entry(meta, "trainer.epoch_done")


def integer_entry(meta, *keys):
    for key in keys:
        if key in meta:
            return int(json.loads(meta[key]))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="rematch checkpoint (.safetensors) of an SGR or SAF model")
    parser.add_argument("output", help="the .pth.tar file to write")
    parser.add_argument("--data_name", help="opt.data_name (default f30k_precomp)")
    parser.add_argument("--data_path", help="opt.data_path (default ./data/)")
    parser.add_argument("--vocab_path", help="opt.vocab_path (default ./vocab/)")
    args = parser.parse_args()
    if os.path.isdir(args.output):
        fail(f"the output '{args.output}' is a folder; give a file name, e.g. "
             f"{os.path.join(args.output, 'model_best.pth.tar')}")
    meta, tensors = read_safetensors(args.checkpoint)
    config, state = model_of(args.checkpoint, meta, tensors)
    try:
        dims = check_model({name: t.shape for name, t in state.items()}, config)
    except LayoutError as e:
        fail(*[f"'{args.checkpoint}': {problem}" for problem in e.args[0]])
    if dims["num_regions"] != OFFICIAL_REGIONS:
        fail(f"'{args.checkpoint}' is a model of {dims['num_regions']} regions per image; the official code "
             f"hard-codes {OFFICIAL_REGIONS} (VisualSA), so it could not load it")
    state_b = ncr_net_b(tensors)
    if state_b is not None:
        try:
            check_model({name: t.shape for name, t in state_b.items()}, config)
        except LayoutError as e:
            fail(*[f"'{args.checkpoint}' (net B): {problem}" for problem in e.args[0]])
    dicts = official_dicts(state)
    best = float(json.loads(meta["trainer.best_score"])) if "trainer.best_score" in meta else 0.0
    if state_b is not None:
        # NCR's co_train.py saves the co-training epoch in progress (`"epoch": epoch`); rematch's epochs count the
        # warm-up too, so this is the epochs completed, as for the one-model format.
        checkpoint = {"epoch": completed_epochs(meta), "model_A": dicts, "model_B": official_dicts(state_b),
                      "best_rsum": max(best, 0.0), "opt": options(config, args, NCR_OPTS_DEFAULTS)}
        tool_output.write_atomically("export_pth", args.output, lambda f: torch.save(checkpoint, f),
                                     "model_best.pth.tar")
        print(f"export_pth: wrote {args.output}: NCR nets A and B ({dims['module_name']}), "
              f"{sum(len(d) for d in dicts)} tensors in 3 state dicts each, "
              f"opt.data_name={checkpoint['opt'].data_name}")
        return
    checkpoint = {"epoch": completed_epochs(meta), "model": dicts,
                  "best_rsum": max(best, 0.0), "opt": options(config, args),
                  "Eiters": integer_entry(meta, "trainer.step", "step")}
    tool_output.write_atomically("export_pth", args.output, lambda f: torch.save(checkpoint, f), "model_best.pth.tar")
    print(f"export_pth: wrote {args.output}: {dims['module_name']} model, "
          f"{sum(len(d) for d in dicts)} tensors in 3 state dicts, opt.data_name={checkpoint['opt'].data_name}")


if __name__ == "__main__":
    main()
