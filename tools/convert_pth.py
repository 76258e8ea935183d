#!/usr/bin/python3
"""Converts an official SGRAF/NCR-lineage PyTorch checkpoint (.pth.tar) into a safetensors file rematch reads.

Usage:  /usr/bin/python3 tools/convert_pth.py CHECKPOINT.pth.tar OUT.safetensors [--model A|B] [--no_checks]

SGRAF (and SCAN/SGR/SAF) save {'model': [img_enc, txt_enc, sim_enc] state dicts, 'opt': argparse options,
'epoch', 'best_rsum', 'Eiters'}; NCR saves two such models as 'model_A' and 'model_B' (choose one with
--model). Each sub-dict keeps its PyTorch names behind the prefix img_enc. / txt_enc. / sim_enc.
("txt_enc.cap_rnn.weight_ih_l0", "sim_enc.SGR_module.0.graph_query_w.weight"). The options go into the
metadata as "opt" (JSON), next to "epoch", "best_rsum", "Eiters" where present and "source" (the file name).

Before writing, the model is checked as rematch will check it when it loads the file (tools/sgraf_layout.py):
the options against the tensors (module_name, bi_gru, no_imgnorm, no_txtnorm, the sizes), and every tensor
name and shape of an SGR or SAF model, missing and extra ones named. DataParallel's "module." prefix is
dropped. A user error (unreadable file, wrong model, unwritable output) prints one line per problem, no
traceback, and exits with status 2; the output folder is created when missing. --no_checks writes the
tensors as they are (for files that are not SGR/SAF models, such as the test fixtures).

Needs torch (to unpickle the checkpoint) and numpy, not the `safetensors` package: the format is written
here by hand, laid out as rematch's own writer lays it out (header padded to 8 bytes, tensors by decreasing
element size, so each is aligned).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_output  # noqa: E402
from sgraf_layout import LayoutError, check_model  # noqa: E402

PREFIXES = {3: ("img_enc", "txt_enc", "sim_enc"), 2: ("img_enc", "txt_enc")}
DTYPES = {torch.float32: ("F32", "<f4"), torch.float64: ("F64", "<f8"), torch.int32: ("I32", "<i4"),
          torch.int64: ("I64", "<i8"), torch.bool: ("BOOL", "|b1"), torch.uint8: ("U8", "|u1")}
WIDENED = {torch.float16: torch.float32, torch.bfloat16: torch.float32}




def fail(*messages):
    tool_output.fail("convert_pth", *messages)


def strip_data_parallel(state, prefix):
    """nn.DataParallel saves every name behind "module."; the official loaders strip it, and so do we."""
    names = list(state)
    if names and all(name.startswith("module.") for name in names):
        print(f"convert_pth: {prefix}: dropped DataParallel's 'module.' prefix from {len(names)} names",
              file=sys.stderr)
        return type(state)((name[len("module."):], value) for name, value in state.items())
    return state


def pick_model(checkpoint, which):
    if not isinstance(checkpoint, dict):
        fail(f"expected a dict checkpoint, got {type(checkpoint).__name__}")
    if "model_A" in checkpoint or "model_B" in checkpoint:
        if which is None:
            fail("this NCR checkpoint holds model_A and model_B; choose one with --model A or --model B")
        key = "model_" + which
        if key not in checkpoint:
            fail(f"the checkpoint has no '{key}' (keys: {sorted(checkpoint)})")
        return checkpoint[key]
    if "model" not in checkpoint:
        fail(f"no 'model', 'model_A' or 'model_B' entry (keys: {sorted(checkpoint)})")
    if which is not None:
        fail("--model selects model_A/model_B of an NCR checkpoint; this one has a single 'model'")
    return checkpoint["model"]


def named_tensors(model):
    if not isinstance(model, (list, tuple)) or len(model) not in PREFIXES:
        fail(f"expected the model as a list of 2 or 3 state dicts [img_enc, txt_enc(, sim_enc)], got "
             f"{type(model).__name__}" + (f" of length {len(model)}" if isinstance(model, (list, tuple)) else ""))
    out = []
    for prefix, state in zip(PREFIXES[len(model)], model):
        if not hasattr(state, "items"):
            fail(f"the {prefix} entry of the model is a {type(state).__name__}, not a state dict")
        for name, value in strip_data_parallel(state, prefix).items():
            if not isinstance(value, torch.Tensor):
                fail(f"{prefix}.{name} is a {type(value).__name__}, not a tensor")
            value = value.detach().cpu()
            if value.dtype in WIDENED:
                print(f"convert_pth: {prefix}.{name}: {value.dtype} widened to float32", file=sys.stderr)
                value = value.to(WIDENED[value.dtype])
            if value.dtype not in DTYPES:
                fail(f"{prefix}.{name} has unsupported dtype {value.dtype}")
            out.append((f"{prefix}.{name}", value.contiguous()))
    return out


def options_of(checkpoint):
    """The argparse options as a dict (a Namespace or a dict in the file), or None."""
    opt = checkpoint.get("opt")
    if opt is None:
        return None
    if hasattr(opt, "__dict__"):
        return dict(vars(opt))
    try:
        return dict(opt)
    except (TypeError, ValueError):
        fail(f"the checkpoint's 'opt' is a {type(opt).__name__}, neither an argparse Namespace nor a dict")


def metadata(checkpoint, source):
    meta = {"source": source}
    options = options_of(checkpoint)
    if options is not None:
        meta["opt"] = json.dumps(options, sort_keys=True, default=str)
    for key in ("epoch", "best_rsum", "Eiters"):
        if key in checkpoint:
            value = checkpoint[key]
            meta[key] = repr(value.item() if isinstance(value, torch.Tensor) else value)
    return dict(sorted(meta.items()))


def safetensors_bytes(tensors, meta):
    # np.array(order="C") keeps 0-d tensors 0-d (np.ascontiguousarray would promote them to [1]).
    arrays = [(name, DTYPES[t.dtype][0], np.array(t.numpy().astype(DTYPES[t.dtype][1], copy=False), order="C"))
              for name, t in tensors]
    layout = sorted(range(len(arrays)), key=lambda i: -arrays[i][2].dtype.itemsize)  # stable: ties keep order
    offsets, position = {}, 0
    for i in layout:
        offsets[i] = (position, position + arrays[i][2].nbytes)
        position += arrays[i][2].nbytes
    header = {"__metadata__": meta} if meta else {}
    for i, (name, dtype, arr) in enumerate(arrays):
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": list(offsets[i])}
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] + [arrays[i][2].tobytes() for i in layout])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="the .pth.tar file")
    parser.add_argument("output", help="the .safetensors file to write")
    parser.add_argument("--model", choices=["A", "B"], help="which model of an NCR checkpoint (model_A/model_B)")
    parser.add_argument("--no_checks", action="store_true",
                        help="write the tensors as they are, without checking them as an SGR/SAF model")
    args = parser.parse_args()
    if not os.path.isfile(args.checkpoint):
        fail(f"there is no file '{args.checkpoint}'")
    try:
        checkpoint = torch.load(args.checkpoint, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any unpickling problem is reported the same way
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        fail(f"cannot load '{args.checkpoint}' with torch.load (is it a PyTorch checkpoint?): {first_line}")
    tensors = named_tensors(pick_model(checkpoint, args.model))
    names = [name for name, _ in tensors]
    if len(set(names)) != len(names):
        fail("repeated tensor names after prefixing")
    if not args.no_checks:
        try:
            check_model({name: tuple(t.shape) for name, t in tensors}, options_of(checkpoint))
        except LayoutError as e:
            fail(*[f"'{args.checkpoint}': {problem}" for problem in e.args[0]],
                 "nothing written: rematch would refuse this model (--no_checks writes the tensors anyway)")
    data = safetensors_bytes(tensors, metadata(checkpoint, os.path.basename(args.checkpoint)))
    tool_output.write_atomically("convert_pth", args.output, lambda f: f.write(data), "model.safetensors")
    print(f"convert_pth: wrote {len(tensors)} tensors to {args.output}")


if __name__ == "__main__":
    main()
