#!/usr/bin/python3
"""PyTorch baseline of bench/run_score.sh: the official SGRAF evaluation of one SGR/SAF checkpoint on a split,
and the synthetic split it is timed on.

  sgraf_score.py make-data --out DIR [--images 1000] [--img_dim 2048] [--vocab 8481] [--seed 0]
      A SCAN-layout precomp test split, DIR/bench_precomp/test_{ims.npy,caps.txt} and
      DIR/vocab/bench_precomp_vocab.json (docs/backbones.md §3.1, §6.1): N images x 5 captions (N rows, so the
      loaders' im_div rule gives 5, as for COCO), 36 regions of img_dim features ~ max(N(0, 1), 0) (non-negative
      like the detector's pooled ReLU activations, and varied enough that the scores spread), a vocabulary of V
      words (4 specials + lower-case consonant-vowel words, so NLTK's word_tokenize, rematch's tokenizer and
      str.split agree on them) and captions of F30K-like length: words ~ lognormal with median 11.3, clipped to
      3..60 (mean ~12 words; the markers add 2 tokens), words drawn uniformly. Writes ~0.3 GB at full size in
      about a second.

  sgraf_score.py run --checkpoint X.pth.tar [--data_path DIR] [--split test] [--device cpu|cuda] --out S.npy
      What SGRAF's evaluation.py evalrank(model_path, data_path, split, fold5=False) does up to the similarity
      matrix, in the same structure (Paranioar/SGRAF, branch python3.6: evaluation.py, data.py, model.py):
        * opt = checkpoint['opt']; the vocabulary <opt.vocab_path>/<opt.data_name>_vocab.json (deserialize_vocab);
          opt.vocab_size = its size; the model built from opt and load_state_dict(checkpoint['model']);
        * data.py's PrecompDataset + collate_fn in a DataLoader of batch 100, not shuffled, pin_memory, no workers
          (get_test_loader): tokenisation in __getitem__, batches sorted by decreasing caption length;
        * encode_data: eval mode, one pass over the loader for max_n_word, one pass encoding each batch with
          forward_emb (images and captions moved to the device, image FC + l2norm, packed Bi-GRU with lengths,
          directions averaged, l2norm), the embeddings cached in float64 NumPy arrays by caption index
          (N_cap images, as every caption encodes its image);
        * img_embs[0::5] (one row per image), then shard_attn_scores(shard_size=100): image shards x caption
          shards, each a forward_sim call (EncoderSimilarity.forward: VisualSA once, then the Python loop over
          the shard's captions, each sliced to its length and replicated over the images), the float64 result
          written into the NumPy matrix.
      The network modules are tests/reference/sgraf_reference.py's (written from docs/backbones.md §1-§5, in the
      official structure; no official code is copied). Tokenisation is NLTK's word_tokenize(caption.lower())
      when NLTK is installed; without it, str.split on lower-cased captions that are only letters and spaces
      (make-data's), where the two agree; any other caption is refused.
      Timing (wall clock, the device synchronised): `encode` = encode_data + the [0::5] subsample, `score` =
      shard_attn_scores (what evaluation.py prints as "calculate similarity time"); dataset construction (np.load)
      and model loading are outside, as in evalrank. One untimed warm-up (one batch encoded, one small
      forward_sim) first, so CUDA/cuBLAS/cuDNN start-up is not counted against the official code. TF32 is off
      (cuDNN's default would use it for the GRU) so both sides compute in float32; --tf32 turns it on.
      Writes the [N_img, N_cap] float64 matrix (rows = images) to --out and prints one JSON line:
      {"encode_s", "score_s", "total_s", "images", "captions", "max_n_word", "device", "gpu", "torch", ...}.

Run with a PyTorch that sees the device (Debian's /usr/bin/python3 for the CPU).
"""
import argparse
import json
import os
import re
import sys
import time

import numpy as np

REGIONS = 36  # SGRAF model.py: VisualSA(embed_size, 0.4, 36) is hard-coded
DATA_NAME = "bench_precomp"
SPECIALS = ["<pad>", "<start>", "<end>", "<unk>"]
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"


def fail(message):
    print(f"sgraf_score: error: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------------------------------------------- make-data

def words(count):
    """`count` distinct lower-case words of consonant-vowel syllables (2, then 3, ... syllables): no two
    consonants in a row, so no Treebank contraction rule (cannot, gonna, gimme, ...) splits one."""
    syllables = [c + v for c in CONSONANTS for v in VOWELS]
    out, prefixes = [], [""]
    while len(out) < count:
        prefixes = [p + s for p in prefixes for s in syllables]
        out += [p for p in prefixes if len(p) >= 4][:count - len(out)]
    return out


def make_data(args):
    rng = np.random.default_rng(args.seed)
    folder = os.path.join(args.out, DATA_NAME)
    os.makedirs(folder, exist_ok=True)
    os.makedirs(os.path.join(args.out, "vocab"), exist_ok=True)

    vocab = SPECIALS + words(args.vocab - len(SPECIALS))
    with open(os.path.join(args.out, "vocab", f"{DATA_NAME}_vocab.json"), "w") as f:
        json.dump({"word2idx": {w: i for i, w in enumerate(vocab)},
                   "idx2word": {str(i): w for i, w in enumerate(vocab)}, "idx": len(vocab)}, f)

    n_cap = 5 * args.images
    lengths = np.clip(np.rint(rng.lognormal(np.log(11.3), 0.38, n_cap)), 3, 60).astype(np.int64)
    ids = rng.integers(len(SPECIALS), len(vocab), int(lengths.sum()))
    with open(os.path.join(folder, "test_caps.txt"), "w") as f:
        for caption in np.split(ids, np.cumsum(lengths)[:-1]):
            f.write(" ".join(vocab[i] for i in caption) + "\n")

    # Written chunk by chunk into the .npy so the full 1000 x 36 x 2048 set never needs a second copy in memory.
    ims = np.lib.format.open_memmap(os.path.join(folder, "test_ims.npy"), mode="w+", dtype=np.float32,
                                    shape=(args.images, REGIONS, args.img_dim))
    for start in range(0, args.images, 100):
        chunk = rng.standard_normal((min(100, args.images - start), REGIONS, args.img_dim), dtype=np.float32)
        ims[start:start + len(chunk)] = np.maximum(chunk, 0, out=chunk)
    ims.flush()
    del ims
    print(f"sgraf_score: wrote {folder}: {args.images} images x 5 captions, [{REGIONS}, {args.img_dim}] regions, "
          f"{len(vocab)} words, caption words mean {lengths.mean():.1f} (max {lengths.max()})")


# ---------------------------------------------------------------------------------------------------------- run

def load_vocab(path):
    """deserialize_vocab (SGRAF vocab.py): word -> id, unknown words -> <unk>."""
    try:
        with open(path) as f:
            data = json.load(f)
        return data["word2idx"], data["idx"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read the vocabulary '{path}' (from the checkpoint's opt.vocab_path and opt.data_name): {e!r}")


def tokenizer():
    """(name, function): NLTK's word_tokenize as data.py calls it, else str.split on letters and spaces only."""
    try:
        import nltk
        nltk.tokenize.word_tokenize("a check")  # LookupError without its Punkt data
        return "nltk", nltk.tokenize.word_tokenize
    except (ImportError, LookupError):
        plain = re.compile(r"[a-z ]*")

        def split(text):
            if not plain.fullmatch(text):
                raise ValueError(text)
            return text.split()
        return "str.split", split


def build_dataset(torch, data_path, split, word2idx):
    """SGRAF data.py PrecompDataset and collate_fn, over the split's files."""
    tokenizer_name, tokenize = tokenizer()
    caps_path, ims_path = (os.path.join(data_path, f"{split}_{s}") for s in ("caps.txt", "ims.npy"))

    class PrecompDataset(torch.utils.data.Dataset):
        def __init__(self):
            try:
                self.captions = [line.strip() for line in open(caps_path, "rb")]
                self.images = np.load(ims_path)
            except OSError as e:
                fail(f"cannot read the split: {e} (give --data_path, the folder holding <data_name>/)")
            self.im_div = 5 if self.images.shape[0] != len(self.captions) else 1
            self.length = len(self.captions) if split != "dev" else 5000
            self.tokenizer = tokenizer_name

        def __getitem__(self, index):
            img_id = index // self.im_div
            image = torch.Tensor(self.images[img_id])
            try:
                tokens = tokenize(self.captions[index].lower().decode("utf-8"))
            except ValueError:
                fail(f"'{caps_path}' line {index + 1}: without NLTK only lower-case letters and spaces are "
                     "tokenised (as word_tokenize would); install python3-nltk for other captions")
            caption = [word2idx["<start>"]] + [word2idx.get(t, word2idx["<unk>"]) for t in tokens]
            caption.append(word2idx["<end>"])
            return image, torch.Tensor(caption), index, img_id

        def __len__(self):
            return self.length

    def collate_fn(data):
        data.sort(key=lambda x: len(x[1]), reverse=True)
        images, captions, ids, _ = zip(*data)
        lengths = [len(cap) for cap in captions]
        targets = torch.zeros(len(captions), max(lengths)).long()
        for i, cap in enumerate(captions):
            targets[i, :lengths[i]] = cap[:lengths[i]]
        return torch.stack(images, 0), targets, lengths, ids

    return PrecompDataset(), collate_fn


class OfficialModel:
    """SGRAF model.py's SGRAF object, eval side only: the three encoders, forward_emb, forward_sim."""

    def __init__(self, torch, opt, state, device):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                        "reference"))
        from sgraf_reference import EncoderImage, EncoderSimilarity, EncoderText
        if not getattr(opt, "bi_gru", True) or getattr(opt, "no_imgnorm", False) or getattr(opt, "no_txtnorm", False):
            fail("the checkpoint's opt sets bi_gru=False, no_imgnorm or no_txtnorm, which this baseline (and "
                 "rematch) does not implement")
        self.img_enc = EncoderImage(opt.img_dim, opt.embed_size)
        self.txt_enc = EncoderText(opt.vocab_size, opt.word_dim, opt.embed_size, 0.4)
        self.sim_enc = EncoderSimilarity(opt.module_name, opt.embed_size, opt.sim_dim, REGIONS, opt.sgr_step, 0.4)
        for module, sub in zip((self.img_enc, self.txt_enc, self.sim_enc), state):
            module.load_state_dict(sub, strict=True)
            module.to(device).eval()  # val_start
        self.device = device

    def forward_emb(self, images, captions, lengths):
        images, captions = images.to(self.device), captions.to(self.device)
        return self.img_enc(images), self.txt_enc(captions, lengths), lengths

    def forward_sim(self, img_embs, cap_embs, cap_lens):
        return self.sim_enc(img_embs, cap_embs, cap_lens)


def encode_data(torch, model, loader):
    """evaluation.py encode_data: embeddings of every caption and its image, in float64, by caption index."""
    max_n_word = 0
    for _, _, lengths, _ in loader:
        max_n_word = max(max_n_word, max(lengths))
    img_embs = cap_embs = None
    for images, captions, lengths, ids in loader:
        with torch.no_grad():
            img_emb, cap_emb, cap_len = model.forward_emb(images, captions, lengths)
        if img_embs is None:
            img_embs = np.zeros((len(loader.dataset), img_emb.size(1), img_emb.size(2)))
            cap_embs = np.zeros((len(loader.dataset), max_n_word, cap_emb.size(2)))
            cap_lens = [0] * len(loader.dataset)
        img_embs[list(ids)] = img_emb.data.cpu().numpy().copy()
        cap_embs[list(ids), :max(lengths), :] = cap_emb.data.cpu().numpy().copy()
        for j, nid in enumerate(ids):
            cap_lens[nid] = cap_len[j]
    return img_embs, cap_embs, cap_lens, max_n_word


def shard_attn_scores(torch, model, img_embs, cap_embs, cap_lens, shard_size, device):
    """evaluation.py shard_attn_scores: the [N_img, N_cap] matrix shard by shard, one forward_sim each."""
    n_im_shard = (len(img_embs) - 1) // shard_size + 1
    n_cap_shard = (len(cap_embs) - 1) // shard_size + 1
    sims = np.zeros((len(img_embs), len(cap_embs)))
    for i in range(n_im_shard):
        im_start, im_end = shard_size * i, min(shard_size * (i + 1), len(img_embs))
        for j in range(n_cap_shard):
            ca_start, ca_end = shard_size * j, min(shard_size * (j + 1), len(cap_embs))
            with torch.no_grad():
                im = torch.from_numpy(img_embs[im_start:im_end]).float().to(device)
                ca = torch.from_numpy(cap_embs[ca_start:ca_end]).float().to(device)
                sim = model.forward_sim(im, ca, cap_lens[ca_start:ca_end])
            sims[im_start:im_end, ca_start:ca_end] = sim.data.cpu().numpy()
    return sims


def run(args):
    import torch
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda and not torch.cuda.is_available():
        fail(f"--device {args.device}: this PyTorch ({torch.__version__}, {sys.executable}) sees no CUDA device")
    if cuda:
        torch.backends.cudnn.benchmark = True  # as SGRAF model.py sets it
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    if args.threads:
        torch.set_num_threads(args.threads)
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    try:
        checkpoint = torch.load(args.checkpoint, map_location="cpu")
        opt, state = checkpoint["opt"], checkpoint["model"]
    except Exception as e:  # torch.load raises many types for a file that is not a checkpoint
        fail(f"cannot load --checkpoint '{args.checkpoint}' as an official SGRAF checkpoint "
             f"(tools/export_pth.py writes one): {e}")
    if args.data_path is not None:
        opt.data_path = args.data_path
    word2idx, opt.vocab_size = load_vocab(os.path.join(opt.vocab_path, f"{opt.data_name}_vocab.json"))
    model = OfficialModel(torch, opt, state, device)
    dataset, collate_fn = build_dataset(torch, os.path.join(opt.data_path, opt.data_name), args.split, word2idx)
    loader = torch.utils.data.DataLoader(dataset=dataset, batch_size=100, shuffle=False, pin_memory=cuda,
                                         collate_fn=collate_fn)

    if not args.no_warmup:
        images, captions, lengths, _ = next(iter(loader))
        with torch.no_grad():
            img_emb, cap_emb, _ = model.forward_emb(images, captions, lengths)
            model.forward_sim(img_emb[:10], cap_emb[:10], lengths[:10])
        sync()

    start = time.perf_counter()
    img_embs, cap_embs, cap_lens, max_n_word = encode_data(torch, model, loader)
    img_embs = np.array([img_embs[i] for i in range(0, len(img_embs), 5)])  # evalrank, fold5=False
    sync()
    encoded = time.perf_counter()
    sims = shard_attn_scores(torch, model, img_embs, cap_embs, cap_lens, args.shard_size, device)
    sync()
    done = time.perf_counter()

    np.save(args.out, sims)
    print(json.dumps({
        "encode_s": encoded - start, "score_s": done - encoded, "total_s": done - start,
        "images": len(img_embs), "captions": len(cap_embs), "max_n_word": int(max_n_word),
        "module": opt.module_name, "shard_size": args.shard_size, "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if cuda else "", "torch": torch.__version__,
        "tf32": bool(args.tf32 and cuda), "tokenizer": dataset.tokenizer}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-data", help="write the synthetic precomp test split")
    make.add_argument("--out", required=True, help="folder to write bench_precomp/ and vocab/ into")
    make.add_argument("--images", type=int, default=1000, help="images (5 captions each)")
    make.add_argument("--img_dim", type=int, default=2048, help="features per region (36 regions)")
    make.add_argument("--vocab", type=int, default=8481, help="vocabulary size, specials included (F30K: 8481)")
    make.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("run", help="official encode_data + shard_attn_scores, timed")
    r.add_argument("--checkpoint", required=True, help="official-format .pth.tar (tools/export_pth.py)")
    r.add_argument("--data_path", help="folder holding <opt.data_name>/ (default: the checkpoint's opt.data_path)")
    r.add_argument("--split", default="test")
    r.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    r.add_argument("--shard_size", type=int, default=100, help="evalrank's shard_size (SGRAF: 100)")
    r.add_argument("--out", required=True, help="the score matrix (.npy, float64, rows = images)")
    r.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    r.add_argument("--tf32", action="store_true", help="allow TF32 in cuDNN and cuBLAS (off: float32 as rematch)")
    r.add_argument("--no-warmup", action="store_true", help="time the first batch's start-up costs too")
    args = parser.parse_args()
    if args.command == "make-data":
        if args.images <= 0 or args.img_dim <= 0 or args.vocab <= len(SPECIALS):
            fail("make-data needs --images > 0, --img_dim > 0 and --vocab > 4")
        make_data(args)
    else:
        if args.shard_size <= 0:
            fail("--shard_size must be positive")
        run(args)


if __name__ == "__main__":
    main()
