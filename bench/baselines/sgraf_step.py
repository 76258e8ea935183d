#!/usr/bin/python3
"""PyTorch baseline for bench/sgraf_step_bench.cpp: one SGR or SAF training step, in two structures.

The step: model.train() (dropout 0.4), the [B, B] sigmoid score matrix of B images against B captions, the
VSE++ hardest-negative triplet loss (SGRAF's ContrastiveLoss, margin 0.2, max_violation: summed over the
batch) and backward to every parameter (.grad reset to None before each step; no optimiser step). The model
code is tests/reference/sgraf_reference.py (written from docs/backbones.md §1-§4), imported unchanged:
  per_caption  its EncoderSimilarity.forward: the official Python loop over captions (§5.1), each caption
               sliced to its length, replicated B times, TextSA, attention, similarity vectors, SGR/SAF, head;
  batched      the same parameters, all B x B pairs at once: captions padded to the batch maximum with masks
               (TextSA mean and softmax, SGR key softmax, SAF BatchNorm statistics per caption over its images
               and real nodes with the sequential running-stat update in closed form, SAF l1 sum), the
               word-region scores as one GEMM, the attention-weighted regions as one bmm per image, SGR and
               SAF on [B*B, L+1, m] node tensors. `--check` verifies it equals per_caption (float64, dropout 0:
               scores, every parameter gradient, BatchNorm buffers).

Batch (as the C++ benchmark): images [B, R, img_dim] ~ U(0, 1); caption b has len_b = 9 + (7*b) mod 11 tokens
(9..19, markers included, mean ~14): <start>=1, random ids in [4, V), <end>=2, then <pad>=0.
Dims: --dims reduced (B=32 R=36 img=256 word=64 embed=256 sim=64 V=8481, the 2-core CPU run), full (B=128
R=36 img=2048 word=300 embed=1024 sim=256 V=8481) or B,R,img,word,embed,sim,V.

Time: median wall-clock seconds of the timed steps (after warm-up; at least --min-repeats, and repeats until
--min-time seconds). Memory: every case runs in a fresh subprocess. CPU: the peak resident set is reset
(/proc/self/clear_refs; else getrusage ru_maxrss, process-wide) after `import torch`, and
step_MiB = peak (VmHWM) - resident set at that point: weights, gradients, inputs, activations.
CUDA (--device cuda, or cuda:N): the model is built on the host (the same weights on every device) and moved,
images and token ids on the device, lengths on the host (pack_padded_sequence wants them there); each timed
step ends with torch.cuda.synchronize(); TF32 off (torch.backends.cuda.matmul.allow_tf32 and
torch.backends.cudnn.allow_tf32 False, which the GRU's cuDNN RNN would otherwise use), as rematch by default.
torch.cuda.reset_peak_memory_stats() before the model is built, then over warm-up and timed steps
gpu_peak_MiB = torch.cuda.max_memory_allocated (weights, gradients, inputs, activations) and
gpu_reserved_peak_MiB = torch.cuda.max_memory_reserved (the caching allocator's segments), the counters
bench/sgraf_step_bench.cpp reports from its memory pool. `--check` runs on the chosen device too.

Run with Debian's PyTorch: /usr/bin/python3 bench/baselines/sgraf_step.py [--threads 2] [--dims reduced]
  [--models SGR,SAF] [--variants per_caption,batched] [--device cpu|cuda|cuda:N] [--check]
(on a GPU, a Python whose PyTorch has CUDA). Prints one JSON object per line: {"case": "sgr_step", "variant":
..., "seconds": ..., "step_MiB": ..., ...}, with gpu_peak_MiB and gpu_reserved_peak_MiB instead of the CPU
memory fields on CUDA.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "reference"))
from sgraf_reference import EncoderSimilarity, Model, l1norm, l2norm  # noqa: E402

FULL = (128, 36, 2048, 300, 1024, 256, 8481)
REDUCED = (32, 36, 256, 64, 256, 64, 8481)
MARGIN = 0.2


def parse_dims(text):
    if text == "full":
        return FULL
    if text == "reduced":
        return REDUCED
    values = tuple(int(v) for v in text.split(","))
    if len(values) != 7 or min(values) <= 0:
        raise argparse.ArgumentTypeError("expected reduced, full or B,R,img,word,embed,sim,V")
    return values


def model_dims(dims):
    _, regions, img_dim, word_dim, embed, sim_dim, vocab = dims
    return dict(img_dim=img_dim, word_dim=word_dim, embed=embed, sim_dim=sim_dim, vocab=vocab, regions=regions,
                sgr_step=3)


class BatchedEncoderSimilarity(EncoderSimilarity):
    """EncoderSimilarity with the per-caption loop replaced by one masked pass over all B_img x B_cap pairs."""

    def forward(self, img_emb, cap_emb, cap_lens):
        n_img, n_reg, d = img_emb.shape
        n_cap, L, _ = cap_emb.shape
        dev, dt = cap_emb.device, cap_emb.dtype
        lens = torch.as_tensor(cap_lens, device=dev)
        mask = torch.arange(L, device=dev)[None, :] < lens[:, None]  # [n_cap, L] real words
        cap_emb = cap_emb * mask.unsqueeze(2).to(dt)  # padding is already 0 (pad_packed_sequence + l2norm)

        img_glo = self.v_global_w(img_emb, img_emb.mean(1))  # [n_img, d]

        # TextSA over real words: masked mean as the raw global vector, masked softmax.
        tsa = self.t_global_w
        cap_mean = cap_emb.sum(1) / lens[:, None].to(dt)
        l_emb = tsa.embedding_local(cap_emb)
        g_emb = tsa.embedding_global(cap_mean).unsqueeze(1)
        logits = tsa.embedding_common(l_emb * g_emb).squeeze(2).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(logits, dim=1)
        cap_glo = l2norm((weights.unsqueeze(2) * cap_emb).sum(dim=1), -1)  # [n_cap, d]

        # Attention (§4.3): every region against every word of every caption as one GEMM. Padding words are
        # zero vectors, so their scores are 0 after LeakyReLU and do not change the per-region word norm.
        scores = (img_emb.reshape(n_img * n_reg, d) @ cap_emb.reshape(n_cap * L, d).t())
        scores = scores.view(n_img, n_reg, n_cap, L).permute(0, 2, 1, 3)  # [n_img, n_cap, R, L]
        scores = l2norm(nn.functional.leaky_relu(scores, 0.1), -1)
        attn = torch.softmax(scores.transpose(2, 3) * 9.0, dim=-1)  # [n_img, n_cap, L, R]
        context = torch.bmm(attn.reshape(n_img, n_cap * L, n_reg), img_emb)  # one bmm per image
        context = l2norm(context.view(n_img, n_cap, L, d), -1)

        sim_loc = l2norm(self.sim_tranloc_w((context - cap_emb.unsqueeze(0)).pow(2)), -1)  # [n_img, n_cap, L, m]
        sim_glo = l2norm(self.sim_tranglo_w((img_glo.unsqueeze(1) - cap_glo.unsqueeze(0)).pow(2)), -1)
        nodes = torch.cat([sim_glo.unsqueeze(2), sim_loc], 2)  # [n_img, n_cap, L+1, m], global node first
        node_mask = torch.cat([torch.ones(n_cap, 1, dtype=torch.bool, device=dev), mask], 1)  # [n_cap, L+1]
        m = nodes.size(-1)

        if self.module_name == "SGR":
            x = nodes.reshape(n_img * n_cap, L + 1, m)
            key_mask = node_mask.unsqueeze(0).expand(n_img, n_cap, L + 1).reshape(n_img * n_cap, 1, L + 1)
            for step in self.SGR_module:  # padded nodes get zero weight as keys; their own rows are unused
                edges = torch.bmm(step.graph_query_w(x), step.graph_key_w(x).transpose(1, 2))
                edges = torch.softmax(edges.masked_fill(~key_mask, float("-inf")), -1)
                x = torch.relu(step.sim_graph_w(torch.bmm(edges, x)))
            sim_vec = x[:, 0, :].view(n_img, n_cap, m)
        else:
            saf = self.SAF_module
            bn = saf.bn
            real = node_mask.unsqueeze(0).to(dt)  # [1, n_cap, L+1]
            a = saf.attn_sim_w(nodes).squeeze(-1)  # [n_img, n_cap, L+1]
            if bn.training:  # statistics per caption over its images and real nodes (§4.6)
                count = (n_img * (lens + 1)).to(dt)  # [n_cap]
                mean = (a * real).sum((0, 2)) / count
                var = ((a - mean[None, :, None]).pow(2) * real).sum((0, 2)) / count
                with torch.no_grad():  # the per-caption sequential running-stat updates, in closed form
                    keep = 1.0 - bn.momentum
                    decay = keep ** torch.arange(n_cap - 1, -1, -1, device=dev, dtype=dt)
                    bn.running_mean.mul_(keep ** n_cap).add_((bn.momentum * decay * mean).sum())
                    unbiased = var * count / (count - 1)
                    bn.running_var.mul_(keep ** n_cap).add_((bn.momentum * decay * unbiased).sum())
                    bn.num_batches_tracked.add_(n_cap)
            else:
                mean = bn.running_mean.expand(n_cap)
                var = bn.running_var.expand(n_cap)
            a = (a - mean[None, :, None]) / torch.sqrt(var + bn.eps)[None, :, None] * bn.weight + bn.bias
            a = l1norm(torch.sigmoid(a) * real, -1)
            sim_vec = l2norm(torch.matmul(a.unsqueeze(2), nodes).squeeze(2), -1)  # [n_img, n_cap, m]

        return torch.sigmoid(self.sim_eval_w(sim_vec)).squeeze(-1)  # [n_img, n_cap], rows = images


def make_model(module_name, dims, variant, dropout=0.4, dtype=torch.float32):
    model = Model(module_name, dropout, model_dims(dims)).to(dtype)
    if variant == "batched":
        model.sim_enc.__class__ = BatchedEncoderSimilarity  # same parameters and names, batched forward
    return model


def make_batch(dims, device, dtype=torch.float32, seed=0):
    batch, regions, img_dim, _, _, _, vocab = dims
    g = torch.Generator().manual_seed(seed)
    lengths = [9 + (7 * b) % 11 for b in range(batch)]
    images = torch.rand(batch, regions, img_dim, generator=g, dtype=dtype)
    captions = torch.zeros(batch, max(lengths), dtype=torch.int64)
    for b, n in enumerate(lengths):
        captions[b, 0], captions[b, n - 1] = 1, 2
        captions[b, 1:n - 1] = torch.randint(4, vocab, (n - 2,), generator=g)
    return images.to(device), captions.to(device), torch.tensor(lengths, dtype=torch.int64)  # lengths on CPU


def contrastive_loss(scores, margin=MARGIN):
    """SGRAF model.py ContrastiveLoss with max_violation=True (rows = images, columns = captions)."""
    diagonal = scores.diag().view(scores.size(0), 1)
    cost_s = (margin + scores - diagonal.expand_as(scores)).clamp(min=0)
    cost_im = (margin + scores - diagonal.t().expand_as(scores)).clamp(min=0)
    eye = torch.eye(scores.size(0), dtype=torch.bool, device=scores.device)
    cost_s = cost_s.masked_fill(eye, 0).max(1)[0]
    cost_im = cost_im.masked_fill(eye, 0).max(0)[0]
    return cost_s.sum() + cost_im.sum()


def status_kib(field):
    with open("/proc/self/status") as f:
        match = re.search(field + r":\s+(\d+)", f.read())
    return int(match.group(1)) if match else -1


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def run_case(module_name, variant, args):
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    rss0 = status_kib("VmRSS")
    was_reset = reset_peak_rss()
    if cuda:
        set_tf32(False)
        torch.cuda.reset_peak_memory_stats(device)
    torch.manual_seed(0)
    # COTRAIN: two SGR nets in one process, a step of each per iteration (NCR, DECL, CRCL's two SGRAF nets).
    nets = 2 if module_name == "COTRAIN" else 1
    models = [make_model("SGR" if nets == 2 else module_name, args.dims, variant).to(device) for _ in range(nets)]
    for model in models:
        model.train()
    images, captions, lengths = make_batch(args.dims, device)
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)

    def step():
        total = 0.0
        for model in models:
            model.zero_grad(set_to_none=True)
            loss = contrastive_loss(model(images, captions, lengths))
            loss.backward()
            total = total + loss.detach()
        return total

    for _ in range(args.warmup):
        step()
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < args.min_repeats or time.perf_counter() - start < args.min_time:
        t0 = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - t0)
    row = {"case": module_name.lower() + "_step", "variant": variant, "seconds": statistics.median(times),
           "repeats": len(times), "loss": float(loss), "dims": ",".join(map(str, args.dims)),
           "device": str(device), "torch": torch.__version__, "threads": torch.get_num_threads()}
    if cuda:
        row["gpu_peak_MiB"] = torch.cuda.max_memory_allocated(device) / 2**20
        row["gpu_reserved_peak_MiB"] = torch.cuda.max_memory_reserved(device) / 2**20
        row["gpu"] = torch.cuda.get_device_name(device)
        row["memory"] = "torch.cuda.max_memory_allocated, max_memory_reserved"
    else:
        peak = status_kib("VmHWM") if was_reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        row["peak_rss_MiB"] = peak / 1024
        row["step_MiB"] = (peak - rss0) / 1024
        row["memory"] = "VmHWM after clear_refs" if was_reset else "ru_maxrss"
    return row


def set_tf32(allowed):
    torch.backends.cuda.matmul.allow_tf32 = allowed
    torch.backends.cudnn.allow_tf32 = allowed


def check(device):
    """batched == per_caption in float64 with dropout 0: train-mode scores, gradients, buffers; eval scores."""
    dims = (7, 5, 12, 10, 16, 8, 30)
    ok = True
    for module_name in ("SGR", "SAF"):
        torch.manual_seed(3)
        ref = make_model(module_name, dims, "per_caption", dropout=0.0, dtype=torch.float64).to(device)
        for m in ref.modules():  # non-trivial BatchNorm affine terms and statistics
            if isinstance(m, nn.BatchNorm1d):
                with torch.no_grad():
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
                    m.running_mean.uniform_(-0.3, 0.3)
                    m.running_var.uniform_(0.5, 1.5)
        bat = make_model(module_name, dims, "batched", dropout=0.0, dtype=torch.float64).to(device)
        bat.load_state_dict(ref.state_dict())
        images, captions, lengths = make_batch(dims, device, torch.float64, seed=5)
        errors = {}
        for mode in ("eval", "train"):
            ref.train(mode == "train")
            bat.train(mode == "train")
            s_ref, s_bat = ref(images, captions, lengths), bat(images, captions, lengths)
            errors["scores_" + mode] = (s_ref - s_bat).abs().max().item()
        contrastive_loss(s_ref).backward()
        contrastive_loss(s_bat).backward()
        p_bat = dict(bat.named_parameters())
        errors["grads"] = max((p.grad - p_bat[n].grad).abs().max().item() for n, p in ref.named_parameters())
        b_bat = dict(bat.named_buffers())
        errors["buffers"] = max((b.double() - b_bat[n].double()).abs().max().item() for n, b in ref.named_buffers())
        good = all(e < 1e-10 for e in errors.values())
        ok &= good
        print(json.dumps({"check": module_name, "ok": good, "max_abs_diff": errors}), flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dims", type=parse_dims, default=REDUCED)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--models", default="SGR,SAF", help="SGR, SAF, COTRAIN (two SGR nets, a step of each)")
    parser.add_argument("--variants", default="per_caption,batched")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--min-repeats", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=4.0, help="seconds of timed steps per case")
    parser.add_argument("--check", action="store_true", help="verify batched == per_caption, then exit")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # MODEL:VARIANT, run in this process
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: this PyTorch sees no CUDA device (torch {torch.__version__}, "
                     f"built with CUDA {torch.version.cuda}); use a PyTorch with CUDA on a GPU machine")

    if args.check:
        sys.exit(0 if check(device) else 1)
    if args.case:
        module_name, variant = args.case.split(":")
        print(json.dumps(run_case(module_name, variant, args)), flush=True)
        return
    passthrough = ["--threads", str(args.threads), "--dims", ",".join(map(str, args.dims)), "--device",
                   args.device, "--warmup", str(args.warmup), "--min-repeats", str(args.min_repeats),
                   "--min-time", str(args.min_time)]
    for module_name in args.models.split(","):
        for variant in args.variants.split(","):
            if variant not in ("per_caption", "batched"):
                parser.error(f"unknown variant {variant}")
            out = subprocess.run([sys.executable, os.path.abspath(__file__), *passthrough, "--case",
                                  f"{module_name}:{variant}"], check=True, stdout=subprocess.PIPE, text=True)
            sys.stdout.write(out.stdout)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
