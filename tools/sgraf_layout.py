"""The tensors of an SGR/SAF model as the official code names and shapes them (docs/backbones.md §4.9), shared by
tools/convert_pth.py (which checks a checkpoint against them before converting) and tools/export_pth.py.

A model is three state dicts, here flattened behind the prefixes img_enc. / txt_enc. / sim_enc.:
  img_enc  fc [E, img_dim]                                                                 (§2)
  txt_enc  embed [V, W]; cap_rnn: a one-layer bidirectional GRU (gates 3E)                  (§3.3)
  sim_enc  v_global_w (VisualSA, BatchNorm1d over R region slots), t_global_w (TextSA),
           sim_tranloc_w / sim_tranglo_w [S, E], sim_eval_w [1, S],                         (§4.1-§4.7)
           SGR_module.0..steps-1 (graph reasoning, [S, S]) or SAF_module (attention filtration)
rematch's own state dict uses exactly these names, so a name or shape that differs is a model rematch would
refuse at load time (models/sgraf_checkpoint.cpp); the checks below say so at conversion time instead.
"""
from collections import OrderedDict


def _linear(name, out_dim, in_dim):
    return [(name + ".weight", (out_dim, in_dim)), (name + ".bias", (out_dim,))]


def _batchnorm(name, dim):
    return [(name + "." + p, (dim,)) for p in ("weight", "bias", "running_mean", "running_var")] + \
           [(name + ".num_batches_tracked", ())]


def expected_shapes(dims):
    """name -> shape of the model `dims` describes (keys: module_name, embed_size, img_dim, vocab_size,
    word_dim, sim_dim, num_regions, sgr_step), in the official registration order."""
    E, S = dims["embed_size"], dims["sim_dim"]
    out = _linear("img_enc.fc", E, dims["img_dim"])
    out.append(("txt_enc.embed.weight", (dims["vocab_size"], dims["word_dim"])))
    for suffix in ("", "_reverse"):
        out += [("txt_enc.cap_rnn.weight_ih_l0" + suffix, (3 * E, dims["word_dim"])),
                ("txt_enc.cap_rnn.weight_hh_l0" + suffix, (3 * E, E)),
                ("txt_enc.cap_rnn.bias_ih_l0" + suffix, (3 * E,)),
                ("txt_enc.cap_rnn.bias_hh_l0" + suffix, (3 * E,))]
    v, t = "sim_enc.v_global_w.", "sim_enc.t_global_w."
    out += _linear(v + "embedding_local.0", E, E) + _batchnorm(v + "embedding_local.1", dims["num_regions"])
    out += _linear(v + "embedding_global.0", E, E) + _batchnorm(v + "embedding_global.1", E)
    out += _linear(v + "embedding_common.0", 1, E)
    out += _linear(t + "embedding_local.0", E, E) + _linear(t + "embedding_global.0", E, E)
    out += _linear(t + "embedding_common.0", 1, E)
    out += _linear("sim_enc.sim_tranloc_w", S, E) + _linear("sim_enc.sim_tranglo_w", S, E)
    out += _linear("sim_enc.sim_eval_w", 1, S)
    if dims["module_name"] == "SGR":
        for i in range(dims["sgr_step"]):
            for w in ("graph_query_w", "graph_key_w", "sim_graph_w"):
                out += _linear(f"sim_enc.SGR_module.{i}.{w}", S, S)
    else:
        out += _linear("sim_enc.SAF_module.attn_sim_w", 1, S) + _batchnorm("sim_enc.SAF_module.bn", 1)
    return OrderedDict(out)


class LayoutError(Exception):
    """The tensors (and options) do not make a model rematch loads; args[0] is the list of problems."""


def _shape_of(shapes, name, dims, problems):
    shape = shapes.get(name)
    if shape is None:
        problems.append(f"the tensor {name} is missing (every SGR/SAF model has it, docs/backbones.md §4.9)")
    elif len(shape) != dims:
        problems.append(f"the tensor {name} has shape {list(shape)}, expected {dims} dimensions")
    else:
        return shape
    return None


def check_model(shapes, opt):
    """The model's dims, read from its tensors (name -> shape) as rematch reads them, after checking them
    against `opt` (a dict of the argparse options, or None) and against the full list of names and shapes.
    Raises LayoutError with every problem found, each one line."""
    problems = []
    fc = _shape_of(shapes, "img_enc.fc.weight", 2, problems)
    embed = _shape_of(shapes, "txt_enc.embed.weight", 2, problems)
    tranloc = _shape_of(shapes, "sim_enc.sim_tranloc_w.weight", 2, problems)
    regions = _shape_of(shapes, "sim_enc.v_global_w.embedding_local.1.weight", 1, problems)
    steps = {name.split(".")[2] for name in shapes if name.startswith("sim_enc.SGR_module.")}
    saf = any(name.startswith("sim_enc.SAF_module.") for name in shapes)
    if bool(steps) == saf:
        problems.append("the tensors hold " + ("both SGR_module and SAF_module" if saf else "neither SGR_module nor "
                        "SAF_module") + " under sim_enc. (expected exactly one: an SGR or a SAF model)")
    if problems:
        raise LayoutError(problems)
    dims = dict(module_name="SAF" if saf else "SGR", embed_size=fc[0], img_dim=fc[1], vocab_size=embed[0],
                word_dim=embed[1], sim_dim=tranloc[0], num_regions=regions[0], sgr_step=len(steps) or 3)
    opt = opt or {}
    if isinstance(opt.get("module_name"), str) and opt["module_name"] != dims["module_name"]:
        problems.append(f"the options say module_name={opt['module_name']!r} but the tensors hold an "
                        f"{dims['module_name']} model")
    # store_true/store_false flags of opts.py (docs/backbones.md §8.1, §9 item 1): rematch implements the defaults.
    for flag, supported in (("bi_gru", True), ("no_imgnorm", False), ("no_txtnorm", False)):
        if isinstance(opt.get(flag), bool) and opt[flag] != supported:
            problems.append(f"the options say {flag}={opt[flag]}, which rematch does not implement (only "
                            f"{flag}={supported}): this model cannot be scored by rematch")
    for key in ("embed_size", "img_dim", "word_dim", "sim_dim", "sgr_step"):
        if key == "sgr_step" and dims["module_name"] != "SGR":
            continue
        if isinstance(opt.get(key), int) and not isinstance(opt[key], bool) and opt[key] != dims[key]:
            problems.append(f"the options say {key}={opt[key]} but the tensors have {key}={dims[key]}")
    want = expected_shapes(dims)
    for name, shape in want.items():
        if name not in shapes:
            problems.append(f"the tensor {name} {list(shape)} is missing")
        elif tuple(shapes[name]) != shape:
            problems.append(f"the tensor {name} has shape {list(shapes[name])}, expected {list(shape)}")
    for name in shapes:
        if name not in want:
            problems.append(f"the tensor {name} {list(shapes[name])} is not part of an {dims['module_name']} model")
    if problems:
        raise LayoutError(problems)
    return dims
