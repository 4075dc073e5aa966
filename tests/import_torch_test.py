#!/usr/bin/env python3
"""import_torch_test.py — ctest `import_torch`: nanoGPT's ckpt.pt, written by PyTorch, read by `gpt`.

    import_torch_test.py GPT WORKDIR

Builds its own files with PyTorch (no network, no real weights): a nanoGPT-format checkpoint saved
with torch.save — {"model": state dict with nanoGPT's names, "optimizer", "model_args", "iter_num",
"best_val_loss", "config"} — with and without torch.compile's "_orig_mod." prefix, with and
without bias, with and without the attention's mask buffer, in float32, bfloat16 and float16,
and its dataset's meta.pkl (pickle's default protocol). For each:
  - `gpt logits ckpt.pt` (the file read directly) equals an independent PyTorch model's logits
    (scripts/gpt_torch.py's GPT, loaded with the same weights) within 1e-4;
  - greedy generation through the KV cache (`gpt sample --greedy`), past block_size, equals
    PyTorch's greedy loop that crops the context to block_size, as nanoGPT's generate() does;
  - `gpt import ckpt.pt meta.pkl -o model.safetensors` writes a model-only file whose logits are
    the same, and which scripts/gpt_torch.py --check loads.
Then the refusals, each with its message: malicious pickles (GLOBAL os system, builtins.eval,
REDUCE on a callable a state dict never calls, and a meta.pkl that runs os.system) are refused by
name and the marker file each tries to create does not exist afterwards (while Python's own
pickle.loads of the same bytes does create it: the pickles really are malicious); a truncated
zip; absurd sizes; a missing storage record; shapes that disagree with model_args; a
checkpoint without meta.pkl (which still runs from token ids: logits --ids).
Hugging Face's GPT-2 layout too: model.safetensors with HF's names (with and without
"transformer."), Conv1D weights in × out, the mask buffers, gelu_new and ε 1e-6, in F32 and F16,
with its config.json: `gpt logits --ids` equals the PyTorch model's within 1e-4; an unknown
activation_function or model_type, shapes against the config and a missing config.json are
refused, and so are sample, attention and import without GPT-2's tokenizer files.
GPT-2's tokenizer files (a small BPE trained here on a text with accents, Chinese and emoji): the
HF model with vocab.json + merges.txt, or tokenizer.json with merges as pairs or as strings, beside
it: `gpt logits --prompt TEXT` equals PyTorch's on the ids of a reference encoder (OpenAI's
algorithm, written here on Python's `regex`), greedy generation past block_size equals PyTorch's
decoded text, attention's tokens are the pieces, inspect names the tokenizer; `gpt import` keeps
the tokenizer (the imported file alone generates the same); a nanoGPT ckpt.pt without meta.pkl,
vocab_size padded past the tokenizer's, is imported with the tokenizer files; a malformed
merges.txt and vocab.json are refused naming the line and the key.
Exits 77 (skipped) where PyTorch is not installed (gpt_torch's own check).
"""
import codecs
import collections
import io
import json
import math
import os
import pickle
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
# The independent PyTorch GPT (nanoGPT's module names). Without PyTorch it says so and exits 77,
# which ctest reports as skipped.
import gpt_torch  # noqa: E402
import torch  # noqa: E402

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\nAll: Speak, speak.\n"
CHARS = sorted(set(TEXT))
TOLERANCE = 1e-4
# |gpt − PyTorch| of any parameter after a few steps of fine-tuning (finetune_case): each step moves
# a parameter by at most about lr (Adam's normalised step), 3e-3 here; the float32 gradients'
# rounding changes that step by far less.
FINETUNE_TOLERANCE = 1e-5
failures = []


def run(args, expect=0):
    out = subprocess.run(args, capture_output=True, text=True, encoding="utf-8")
    if out.returncode != expect:
        sys.exit(f"$ {' '.join(args)}\n{out.stdout}{out.stderr}exit status {out.returncode}, expected {expect}")
    return out


def model_args(bias, block_size=16):
    return dict(n_layer=2, n_head=4, n_embd=32, block_size=block_size, bias=bias, vocab_size=len(CHARS), dropout=0.0)


def make_model(bias, seed):
    a = model_args(bias)
    cfg = dict(a, mask="strict", softmax="stable")
    torch.manual_seed(seed)
    m = gpt_torch.GPT(cfg)
    with torch.no_grad():  # larger than nanoGPT's init, so that attention and the logits are far from uniform
        for name, p in m.named_parameters():
            p.copy_(1.0 + 0.2 * torch.randn_like(p) if "ln_" in name and name.endswith("weight")
                    else 0.3 * torch.randn_like(p))
    return m.eval(), cfg


def write_ckpt(path, model, bias, dtype, prefix, mask_buffer, args=None):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.zero_grad()
    model(torch.tensor([[0, 1, 2]])).sum().backward()
    opt.step()  # real optimizer state (tensors) for the reader to skip; the weights move a little
    sd = collections.OrderedDict()
    for k, v in model.state_dict().items():
        sd[prefix + k] = v.to(dtype)
        if mask_buffer and k.endswith("attn.c_proj.bias" if bias else "attn.c_proj.weight"):
            bs = model_args(bias)["block_size"]
            sd[prefix + k.replace("c_proj.bias" if bias else "c_proj.weight", "bias")] = \
                torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs)
    ckpt = {"model": sd, "optimizer": opt.state_dict(), "model_args": args or model_args(bias), "iter_num": 250,
            "best_val_loss": torch.tensor(1.2345),
            "config": {"dataset": "shakespeare_char", "batch_size": 12, "learning_rate": 1e-3, "compile": True,
                       "device": "cuda", "dtype": "bfloat16", "betas": (0.9, 0.99), "wandb_log": False}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(ckpt, path)
    # the model PyTorch runs: the weights as stored (bfloat16 and float16 rounded), in float32
    with torch.no_grad():
        for k, p in model.state_dict().items():
            p.copy_(p.to(dtype).float())


def write_meta(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump({"vocab_size": len(CHARS), "itos": dict(enumerate(CHARS)),
                     "stoi": {c: i for i, c in enumerate(CHARS)}}, f)


def check_logits(gpt, file, model, prompt, label):
    ours = json.loads(run([gpt, "logits", file, "--prompt", prompt]).stdout)
    ids = [CHARS.index(c) for c in prompt]
    with torch.no_grad():
        theirs = model(torch.tensor([ids]))[0].double()
    diff = (torch.tensor(ours["logits"], dtype=torch.float64) - theirs).abs().max().item()
    scale = theirs.abs().max().item()
    print(f"{label}: max |gpt − PyTorch| = {diff:.3g} (largest |logit| {scale:.3g})")
    if not diff <= TOLERANCE:
        failures.append(f"{label}: logits differ by {diff}")
    if scale < 1.0:
        failures.append(f"{label}: the logits are tiny ({scale}), so the check proves little")


def check_greedy(gpt, file, model, prompt, n, label):
    out = json.loads(run([gpt, "sample", file, "--prompt", prompt, "--greedy", "--max-new-tokens", str(n),
                          "--json"]).stdout)
    ids = [CHARS.index(c) for c in prompt]
    bs = model_args(True)["block_size"]
    with torch.no_grad():
        for _ in range(n):
            ids.append(int(model(torch.tensor([ids[-bs:]]))[0, -1].argmax()))
    want = "".join(CHARS[i] for i in ids)
    print(f"{label}: greedy {n} tokens past block_size {bs}: {'same' if out['text'] == want else 'DIFFERENT'}")
    if out["text"] != want:
        failures.append(f"{label}: greedy generation differs:\n  gpt   {out['text']!r}\n  torch {want!r}")


def refused(gpt, args, needle, label):
    out = run([gpt] + args, expect=1)
    message = out.stderr.strip()
    print(f"{label}: refused: {message}")
    if needle not in message:
        failures.append(f"{label}: the message does not say {needle!r}: {message}")


def evil_zip(path, data_pkl):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data_pkl)
        z.writestr("archive/version", "3\n")


# ---------------------------------------------------------------- Hugging Face's GPT-2 layout

HF_VOCAB = 300
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def write_hf(folder, model, dtype, prefix, config):
    """model.safetensors in HF's GPT-2 layout (Conv1D weights in × out, the mask buffers, no lm_head)
    and its config.json; the model PyTorch runs gets the weights as stored."""
    os.makedirs(folder, exist_ok=True)
    tensors = []
    bs = config["n_positions"]
    for k, v in model.state_dict().items():
        if k == "lm_head.weight":
            continue  # tied to wte: HF's files leave it out
        name = prefix + k[len("transformer."):]
        tensors.append((name, (v.t() if k.endswith(CONV1D) else v).contiguous().to(dtype)))
        if k.endswith("attn.c_proj.bias"):
            tensors.append((name.replace("c_proj.bias", "bias"), torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs)))
            tensors.append((name.replace("c_proj.bias", "masked_bias"), torch.tensor(-1e4)))
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors:
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    with torch.no_grad():
        for k, p in model.state_dict().items():
            p.copy_(p.to(dtype).float())
    return os.path.join(folder, "model.safetensors")


def hf_cases(gpt, work):
    ids = [5, 299, 17, 42, 0, 256, 3, 77, 150, 9]
    config = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 32, "n_positions": 16, "n_ctx": 16,
              "vocab_size": HF_VOCAB, "layer_norm_epsilon": 1e-6, "activation_function": "gelu_new", "n_inner": None}
    for n, (name, dtype, prefix) in enumerate([("hf_f32", torch.float32, ""), ("hf_f16_prefixed", torch.float16, "transformer.")]):
        cfg = dict(n_layer=2, n_head=4, n_embd=32, block_size=16, vocab_size=HF_VOCAB, mask="strict",
                   softmax="stable", activation="gelu_new", ln_eps=1e-6)
        torch.manual_seed(20 + n)
        model = gpt_torch.GPT(cfg)
        with torch.no_grad():
            for pname, p in model.named_parameters():
                p.copy_(1.0 + 0.2 * torch.randn_like(p) if "ln_" in pname and pname.endswith("weight")
                        else 0.3 * torch.randn_like(p))
        model.eval()
        file = write_hf(os.path.join(work, name), model, dtype, prefix, config)
        ours = json.loads(run([gpt, "logits", file, "--ids", ",".join(map(str, ids))]).stdout)
        with torch.no_grad():
            theirs = model(torch.tensor([ids]))[0].double()
        diff = (torch.tensor(ours["logits"], dtype=torch.float64) - theirs).abs().max().item()
        print(f"{name}: max |gpt − PyTorch| = {diff:.3g} (largest |logit| {theirs.abs().max().item():.3g})")
        if not diff <= TOLERANCE:
            failures.append(f"{name}: logits differ by {diff}")
        info = json.loads(run([gpt, "inspect", file, "--json"]).stdout)
        if info["config"].get("activation") != "gelu_new" or info["vocab"] is not None:
            failures.append(f"{name}: inspect says {info['config']}, vocab {info['vocab']}")
    folder = os.path.join(work, "hf_f32")
    for key, value, needle in [("activation_function", "relu", "\"activation_function\" is \"relu\""),
                               ("n_positions", 32, "has shape [16, 32] but"),
                               ("model_type", "llama", "only GPT-2's")]:
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(dict(config, **{key: value}), f)
        refused(gpt, ["logits", os.path.join(folder, "model.safetensors"), "--ids", "1,2"], needle, "config " + key)
    os.remove(os.path.join(folder, "config.json"))
    refused(gpt, ["logits", os.path.join(folder, "model.safetensors"), "--ids", "1,2"], "needs its config.json",
            "no config.json")
    hf = os.path.join(work, "hf_f16_prefixed", "model.safetensors")
    refused(gpt, ["sample", hf, "--prompt", "a"], "give its vocab.json and merges.txt", "sample without a tokenizer")
    refused(gpt, ["attention", hf, "--prompt", "a"], "give its vocab.json and merges.txt", "attention without a tokenizer")
    refused(gpt, ["import", hf, "-o", os.path.join(work, "hf.safetensors")], "give its vocab.json and merges.txt",
            "import without a tokenizer")


# ---------------------------------------------------------------- GPT-2's tokenizer files

PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
BPE_TEXT = TEXT * 3 + "Café, naïve: 1999 — 中文 😀 don't we'll 'tis\n\n  "


def byte_symbols():
    """GPT-2's bytes_to_unicode: printable bytes stand for themselves, the rest for 256 + k."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


def train_bpe(text, n_merges):
    """A tiny BPE trainer (most frequent adjacent pair within GPT-2's pre-tokens, ties by first seen):
    vocab (token → id: the 256 byte symbols, then one token per merge) and the merges in rank order."""
    import regex
    sym = byte_symbols()
    words = [[sym[b] for b in w.encode()] for w in regex.findall(PATTERN, text)]
    vocab = {sym[b]: b for b in range(256)}
    merges = []
    for _ in range(n_merges):
        counts = collections.Counter()
        for w in words:
            counts.update(zip(w, w[1:]))
        if not counts:
            break
        best = max(counts, key=lambda p: counts[p])
        merges.append(best)
        vocab.setdefault(best[0] + best[1], len(vocab))
        for w in words:
            i = 0
            while i < len(w) - 1:
                if (w[i], w[i + 1]) == best:
                    w[i:i + 2] = [best[0] + best[1]]
                i += 1
    return vocab, merges


def reference_encode(text, vocab, merges):
    """GPT-2's encode as OpenAI's encoder.py does it: pre-tokenize, map bytes, then repeatedly merge every
    occurrence of the lowest-ranked pair, left to right."""
    import regex
    sym = byte_symbols()
    ranks = {m: r for r, m in enumerate(merges)}
    ids = []
    for piece in regex.findall(PATTERN, text):
        word = [sym[b] for b in piece.encode()]
        while len(word) > 1:
            pairs = set(zip(word, word[1:]))
            best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
            if best not in ranks:
                break
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        ids += [vocab[t] for t in word]
    return ids


def reference_decode(ids, vocab):
    back = {v: k for k, v in byte_symbols().items()}
    tokens = {i: t for t, i in vocab.items()}
    return bytes(back[c] for i in ids for c in tokens.get(i, "")).decode("utf-8", errors="replace")


def write_tokenizer(folder, vocab, merges, form):
    if form == "files":
        with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False)
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    else:  # Hugging Face's tokenizer.json, merges as pairs (newer) or "a b" strings (older)
        ms = [[a, b] for a, b in merges] if form == "json_pairs" else [f"{a} {b}" for a, b in merges]
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": ms}}, f, ensure_ascii=False)


def check_bpe_generation(gpt, file, model, vocab, merges, prompt, n, block_size, label):
    """logits of a text prompt, and greedy generation past block_size, against PyTorch fed the reference ids."""
    ids = reference_encode(prompt, vocab, merges)
    ours = json.loads(run([gpt, "logits", file, "--prompt", prompt]).stdout)
    with torch.no_grad():
        theirs = model(torch.tensor([ids]))[0].double()
    diff = (torch.tensor(ours["logits"], dtype=torch.float64) - theirs).abs().max().item()
    print(f"{label}: prompt {prompt!r} is {len(ids)} tokens; max |gpt − PyTorch| = {diff:.3g}")
    if not diff <= TOLERANCE:
        failures.append(f"{label}: logits of the text prompt differ by {diff}")
    out = json.loads(run([gpt, "sample", file, "--prompt", prompt, "--greedy", "--max-new-tokens", str(n),
                          "--json"]).stdout)
    with torch.no_grad():
        for _ in range(n):
            ids.append(int(model(torch.tensor([ids[-block_size:]]))[0, -1].argmax()))
    want = reference_decode(ids, vocab)
    print(f"{label}: greedy {n} tokens past block_size {block_size}: {'same' if out['text'] == want else 'DIFFERENT'}")
    if out["text"] != want:
        failures.append(f"{label}: greedy generation differs:\n  gpt   {out['text']!r}\n  torch {want!r}")
    if len(out["tokens"]) != len(ids):
        failures.append(f"{label}: sample --json gave {len(out['tokens'])} token labels for {len(ids)} tokens")


def bpe_cases(gpt, work):
    try:
        import regex  # noqa: F401  (GPT-2's own pattern module: the reference encoder's)
    except ImportError:
        failures.append("python3-regex is missing (scripts/setup installs it): the BPE cases cannot run")
        return
    vocab, merges = train_bpe(BPE_TEXT, HF_VOCAB - 256)
    assert len(vocab) == HF_VOCAB, len(vocab)
    prompt = "Before we proceed, Café 中文"
    config = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 32, "n_positions": 32, "n_ctx": 32,
              "vocab_size": HF_VOCAB, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    cfg = dict(n_layer=2, n_head=4, n_embd=32, block_size=32, vocab_size=HF_VOCAB, mask="strict", softmax="stable",
               activation="gelu_new", ln_eps=1e-5)
    torch.manual_seed(31)
    model = gpt_torch.GPT(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.3 * torch.randn_like(p))
    model.eval()
    for form in ("files", "json_pairs", "json_strings"):
        folder = os.path.join(work, "hf_bpe_" + form)
        file = write_hf(folder, model, torch.float32, "", config)
        write_tokenizer(folder, vocab, merges, form)
        check_bpe_generation(gpt, file, model, vocab, merges, prompt, 40, 32, "HF + " + form)
    folder = os.path.join(work, "hf_bpe_files")
    file = os.path.join(folder, "model.safetensors")
    # Each token's text: its bytes, a byte that is no whole character (é and 中 split) as <0xC3>.
    codecs.register_error("hexbyte", lambda e: ("".join(f"<0x{b:02X}>" for b in e.object[e.start:e.end]), e.end))
    back, tokens = {c: b for b, c in byte_symbols().items()}, {i: t for t, i in vocab.items()}
    piece = lambda i: bytes(back[c] for c in tokens[i]).decode("utf-8", errors="hexbyte")  # noqa: E731
    info = json.loads(run([gpt, "inspect", file, "--json"]).stdout)
    if info.get("tokenizer") != "gpt2-bpe" or info["vocab"] != [piece(i) for i in range(HF_VOCAB)]:
        failures.append(f"HF + files: inspect says tokenizer {info.get('tokenizer')}, vocab {info['vocab'][250:260]}")
    maps = json.loads(run([gpt, "attention", file, "--prompt", prompt]).stdout)
    want = [piece(i) for i in reference_encode(prompt, vocab, merges)]
    if maps["tokens"] != want:
        failures.append(f"HF + files: attention's tokens {maps['tokens']} are not the pieces {want}")
    # gpt import keeps the tokenizer: the model-only file alone generates the same.
    alone = os.path.join(work, "hf_bpe_imported")
    os.makedirs(alone, exist_ok=True)
    out = os.path.join(alone, "gpt2-like.safetensors")
    run([gpt, "import", file, os.path.join(folder, "config.json"), os.path.join(folder, "vocab.json"),
         os.path.join(folder, "merges.txt"), "-o", out, "-q"])
    check_bpe_generation(gpt, out, model, vocab, merges, prompt, 40, 32, "imported HF + tokenizer")
    # nanoGPT's ckpt.pt without meta.pkl, vocab_size padded past the tokenizer's (as 50,304 pads 50,257).
    args = dict(n_layer=2, n_head=4, n_embd=32, block_size=32, bias=True, vocab_size=HF_VOCAB + 4, dropout=0.0)
    torch.manual_seed(32)
    nano = gpt_torch.GPT(dict(n_layer=2, n_head=4, n_embd=32, block_size=32, vocab_size=HF_VOCAB + 4, mask="strict",
                              softmax="stable"))
    with torch.no_grad():
        for p in nano.parameters():
            p.copy_(0.3 * torch.randn_like(p))
    nano.eval()
    root = os.path.join(work, "nanogpt_bpe")
    ckpt = os.path.join(root, "out", "ckpt.pt")
    write_ckpt(ckpt, nano, True, torch.float32, "", False, args=args)
    refused(gpt, ["sample", ckpt, "--prompt", "a"], "give its vocab.json and merges.txt", "ckpt.pt without a tokenizer")
    nano_out = os.path.join(root, "model.safetensors")
    run([gpt, "import", ckpt, os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"), "-o", nano_out, "-q"])
    check_bpe_generation(gpt, nano_out, nano, vocab, merges, prompt, 40, 32, "nanoGPT ckpt.pt + GPT-2's tokenizer")
    # Malformed tokenizer files are refused, naming the line or key.
    bad = os.path.join(work, "hf_bpe_bad")
    write_hf(bad, model, torch.float32, "", config)
    write_tokenizer(bad, vocab, merges, "files")
    with open(os.path.join(bad, "merges.txt"), "a", encoding="utf-8") as f:
        f.write("oops\n")
    refused(gpt, ["sample", os.path.join(bad, "model.safetensors"), "--prompt", "a"],
            f"merges.txt line {len(merges) + 2}: \"oops\" is not a merge", "merges.txt with a bad line")
    write_tokenizer(bad, dict(vocab, **{"x中": len(vocab)}), merges, "files")
    refused(gpt, ["sample", os.path.join(bad, "model.safetensors"), "--prompt", "a"],
            "vocab.json key \"x中\" holds \"中\" (U+4E2D), which is none of GPT-2's 256 byte symbols",
            "vocab.json with a token outside the byte symbols")


def finetune_case(gpt, work):
    """`gpt finetune` against torch.optim.AdamW: a few steps from the same ckpt.pt on the same batch,
    with the same learning rates (warm-up, then the cosine to lr/10), the same decay groups (the
    matrices decay, biases and LayerNorms do not: nanoGPT's configure_optimizers) and the same
    clipping of the gradients' global norm (all but the keys' bias, whose gradient is exactly zero:
    below). The text is exactly 2 × (T + 1) characters, so the
    training split is one window and every row of every batch is that window: the batches need no
    sampler mirrored. Our losses, learning rates and gradient norms (the CSV log) and every parameter
    after the steps must agree with PyTorch's."""
    T, B, steps, lr, warmup, clip, wd = 16, 4, 4, 3e-3, 1, 0.5, 0.1
    model, _ = make_model(True, seed=11)
    root = os.path.join(work, "finetune")
    ckpt, meta = os.path.join(root, "ckpt.pt"), os.path.join(root, "meta.pkl")
    write_ckpt(ckpt, model, True, torch.float32, "", False)
    write_meta(meta)
    text = (TEXT * 2)[: 2 * (T + 1)]
    text_file, out, log = (os.path.join(root, n) for n in ("text.txt", "ft.safetensors", "ft.csv"))
    with open(text_file, "w", encoding="utf-8") as f:
        f.write(text)
    run([gpt, "finetune", ckpt, meta, "--text", text_file, "-o", out, "--context", str(T), "--batch-size", str(B),
         "--steps", str(steps), "--lr", str(lr), "--warmup-steps", str(warmup), "--grad-clip", str(clip),
         "--weight-decay", str(wd), "--eval-interval", str(steps), "--threads", "1", "--log", log, "-q"])
    ids = [CHARS.index(c) for c in text]
    x, y = torch.tensor([ids[:T]] * B), torch.tensor([ids[1:T + 1]] * B)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    params = dict(model.named_parameters())  # the tied wte / lm_head once
    opt = torch.optim.AdamW([{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": wd},
                             {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.99), eps=1e-8)
    min_lr, theirs = lr / 10, []
    for s in range(steps):
        ratio = (s - warmup) / (steps - warmup)
        lr_s = lr * (s + 1) / (warmup + 1) if s < warmup else min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (lr - min_lr)
        for g in opt.param_groups:
            g["lr"] = lr_s
        opt.zero_grad()
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        theirs.append((loss.item(), lr_s, norm.item()))
    with open(log, encoding="utf-8") as f:
        rows = [r.split(",") for r in f.read().split("\n")[1:] if r and r.split(",")[1]]  # (row 0: the validation loss alone)
    ours = [(float(r[1]), float(r[3]), float(r[4])) for r in rows]
    if len(ours) != steps:
        failures.append(f"finetune: the log has {len(ours)} rows, not {steps}")
    for k, ((l0, r0, n0), (l1, r1, n1)) in enumerate(zip(ours, theirs)):
        if abs(l0 - l1) > TOLERANCE or abs(r0 - r1) > 1e-6 * lr or abs(n0 - n1) > TOLERANCE * max(1.0, n1):
            failures.append(f"finetune step {k + 1}: loss, lr, grad norm {l0}, {r0}, {n0} against PyTorch's {l1}, {r1}, {n1}")
    if not any(n > clip for _, _, n in theirs):
        failures.append(f"finetune: no step was clipped (norms {[n for _, _, n in theirs]}), so the clip is not checked")
    _, tensors = gpt_torch.read_checkpoint(out)
    state = model.state_dict()
    # c_attn.bias's middle third, the keys' bias, is left out: its exact gradient is zero (it adds
    # q·b_k to every score of a query, which the softmax does not see), so what either side's
    # gradient holds there is rounding noise, and Adam's m/√v turns noise into steps of ±lr
    # (measured: 1.5e-3 apart after 4 steps, where every other parameter is within 1e-6)
    def compared(k, t):
        return t.view(3, -1)[[0, 2]] if k.endswith("attn.c_attn.bias") else t
    diff = max((compared(k, tensors[k]) - compared(k, state[k])).abs().max().item() for k in state)
    moved = max((state[k] - v).abs().max().item() for k, v in start.items())
    print(f"finetune: {steps} steps of AdamW (lr {lr}, warm-up {warmup}, clip {clip}, decay {wd}) on {B} × {T}: "
          f"losses {[round(l, 4) for l, _, _ in theirs]}, the parameters moved up to {moved:.3g}, "
          f"max |gpt − PyTorch| over them = {diff:.3g}")
    if not moved > 100 * FINETUNE_TOLERANCE:
        failures.append(f"finetune: the parameters moved only {moved}, so the check proves little")
    if not diff <= FINETUNE_TOLERANCE:
        failures.append(f"finetune: the parameters differ from PyTorch's by {diff} (tolerance {FINETUNE_TOLERANCE})")


def main():
    gpt, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    prompt = "Before we"
    cases = [  # (name, bias, dtype, prefix, mask buffer)
        ("f32_bias", True, torch.float32, "", True),
        ("bf16_nobias_compiled", False, torch.bfloat16, "_orig_mod.", False),
        ("f16_bias_compiled", True, torch.float16, "_orig_mod.", True),
        ("f32_nobias", False, torch.float32, "", True),
    ]
    for n, (name, bias, dtype, prefix, buf) in enumerate(cases):
        root = os.path.join(work, name)
        ckpt = os.path.join(root, "out-shakespeare-char", "ckpt.pt")
        model, _ = make_model(bias, seed=n + 1)
        write_ckpt(ckpt, model, bias, dtype, prefix, buf)
        meta = os.path.join(root, "data", "shakespeare_char", "meta.pkl")  # nanoGPT's layout
        write_meta(meta)
        check_logits(gpt, ckpt, model, prompt, name + " ckpt.pt")
        check_greedy(gpt, ckpt, model, prompt, 40, name + " ckpt.pt")
        out = os.path.join(root, "model.safetensors")
        run([gpt, "import", ckpt, meta, "-o", out, "-q"])
        check_logits(gpt, out, model, prompt, name + " imported")
        run([sys.executable, os.path.join(HERE, "..", "scripts", "gpt_torch.py"), out, "--prompt", prompt, "--check",
             "--gpt", gpt])
        # the other commands that read a model take the ckpt.pt as it is
        info = json.loads(run([gpt, "inspect", ckpt, "--json"]).stdout)
        want = dict(n_layer=2, n_head=4, n_embd=32, block_size=16, vocab_size=len(CHARS))
        if any(info["config"][k] != v for k, v in want.items()) or info["config"].get("bias", True) != bias or \
                info["source"] != "nanoGPT out-shakespeare-char/ckpt.pt, iter 250" or "".join(info["vocab"]) != "".join(CHARS):
            failures.append(f"{name}: inspect says {info}")
        spec = json.loads(run([gpt, "attention", ckpt, "--prompt", prompt, "--head", "2.3"]).stdout)
        if len(spec["Q"]) != len(prompt):
            failures.append(f"{name}: attention --head gave {len(spec['Q'])} rows of Q for {len(prompt)} tokens")
        for cmd in (["resume", ckpt, "--steps", "10"], ["eval", out]):
            if "holds a model only" not in run([gpt] + cmd, expect=1).stderr:
                failures.append(f"{name}: {cmd[0]} of a model-only file is not refused as such")

    hf_cases(gpt, work)
    bpe_cases(gpt, work)
    finetune_case(gpt, work)

    # ---------------------------------------------------------------- refusals
    good = os.path.join(work, "f32_bias", "out-shakespeare-char", "ckpt.pt")
    meta = os.path.join(work, "f32_bias", "data", "shakespeare_char", "meta.pkl")
    with open(good, "rb") as f:
        data = f.read()
    evil = os.path.join(work, "evil")
    os.makedirs(evil, exist_ok=True)
    attacks = [
        ("GLOBAL os system", lambda cmd: b"\x80\x02cos\nsystem\nq\x00X" + len(cmd).to_bytes(4, "little") + cmd +
         b"\x85R.", "os.system"),
        ("builtins.eval", lambda cmd: b"\x80\x02cbuiltins\neval\nX" +
         len(b"__import__('os').system('" + cmd + b"')").to_bytes(4, "little") +
         b"__import__('os').system('" + cmd + b"')" + b"\x85R.", "builtins.eval"),
        ("REDUCE on an unknown callable", lambda cmd: b"\x80\x02ctorch\nFloatStorage\nX" +
         len(cmd).to_bytes(4, "little") + cmd + b"\x85R.", "REDUCE at byte"),
    ]
    for label, make, needle in attacks:
        marker = os.path.join(evil, label.replace(" ", "_") + ".marker")
        pkl = make(("touch " + marker).encode())
        path = os.path.join(evil, label.replace(" ", "_") + ".pt")
        evil_zip(path, pkl)
        refused(gpt, ["logits", path, "--prompt", "a"], needle, label)
        if os.path.exists(marker):
            failures.append(f"{label}: the marker {marker} exists: something ran")
        if label != "REDUCE on an unknown callable":  # Python's own unpickler does run it
            pickle.loads(pkl)
            if not os.path.exists(marker):
                failures.append(f"{label}: Python's pickle did not create the marker: the test pickle is harmless")
            os.remove(marker)

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + os.path.join(evil, "meta.marker"),))
    evil_meta = os.path.join(evil, "meta.pkl")
    with open(evil_meta, "wb") as f:
        pickle.dump({"vocab_size": 3, "itos": Evil()}, f)
    refused(gpt, ["import", good, evil_meta, "-o", os.path.join(evil, "m.safetensors")], "system", "evil meta.pkl")
    if os.path.exists(os.path.join(evil, "meta.marker")):
        failures.append("evil meta.pkl: its marker exists: something ran")

    truncated = os.path.join(evil, "truncated.pt")
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    refused(gpt, ["import", truncated, meta, "-o", os.path.join(evil, "m.safetensors")],
            "no end-of-central-directory record", "truncated zip")

    absurd = bytearray(data)
    at = absurd.index(b"PK\x01\x02")  # the first central directory entry: its sizes
    absurd[at + 20:at + 28] = (0x7FFFFFF0).to_bytes(4, "little") * 2
    path = os.path.join(evil, "absurd.pt")
    with open(path, "wb") as f:
        f.write(absurd)
    refused(gpt, ["import", path, meta, "-o", os.path.join(evil, "m.safetensors")], "past the end of the file",
            "absurd sizes")

    missing = os.path.join(evil, "missing.pt")
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(missing, "w", zipfile.ZIP_STORED) as dst:
        for item in src.infolist():
            if item.filename != "archive/data/0" and not item.filename.endswith("ckpt/data/0"):
                dst.writestr(item.filename, src.read(item.filename))
    refused(gpt, ["import", missing, meta, "-o", os.path.join(evil, "m.safetensors")], "there is no record",
            "missing storage record")

    model, _ = make_model(True, seed=9)
    wrong = os.path.join(evil, "wrong", "ckpt.pt")
    write_ckpt(wrong, model, True, torch.float32, "", False, args=model_args(True, block_size=32))
    refused(gpt, ["import", wrong, meta, "-o", os.path.join(evil, "m.safetensors")],
            "transformer.wpe.weight has shape (16, 32) but model_args", "shapes against model_args")

    lonely = os.path.join(evil, "lonely", "ckpt.pt")
    os.makedirs(os.path.dirname(lonely), exist_ok=True)
    with open(lonely, "wb") as f:
        f.write(data)
    refused(gpt, ["logits", lonely, "--prompt", "a"], "no meta.pkl", "no meta.pkl")
    refused(gpt, ["import", lonely, "-o", os.path.join(evil, "m.safetensors")], "no meta.pkl", "import without meta.pkl")
    if len(json.loads(run([gpt, "logits", lonely, "--ids", "1,2,3"]).stdout)["logits"]) != 3:
        failures.append("no meta.pkl: logits --ids does not give 3 rows")

    if failures:
        sys.exit("import_torch: FAILED:\n" + "\n".join(failures))
    print("import_torch: ok")


if __name__ == "__main__":
    main()
