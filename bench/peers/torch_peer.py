#!/usr/bin/python3
"""torch_peer.py — PyTorch on the CPU running the workloads of bench/README.md (W1–W4, W6, W7), the
native peer of bench/run_peers.sh. A benchmark: it prints numbers and never fails on them.

What it measures, one process, float32, `--threads` threads (1 in every sitting we quote):
  W1  attention forward on one head, Q, K, V of shape (T, 64), T = 64, 256, 1024, causal:
      softmax(QKᵀ/√d + mask)·V as a PyTorch user writes it (W1_attn_manual_T…), and through
      F.scaled_dot_product_attention where this PyTorch has it (W1_attn_sdpa_T…; 1.13 has not).
  W2  torch.mm of two (n, n) matrices into a preallocated output, n = 64, 256, 512.
  W3  a training step of the tiny and the small GPT (forward, backward, AdamW) on random tokens.
  W7  W3's step with the modern variants (variants_model.py): tiny and small with RoPE, RMSNorm,
      SwiGLU and 2 key/value heads, tiny with ALiBi, tiny with a window of 16.
  W4  greedy generation of 256 tokens with the tiny GPT: without a cache (the context cropped to
      the last 64 tokens, a full forward per token) and with a KV cache (block 257); the two are
      checked to give the same tokens before the cached one is timed.
Each figure: the call repeated, doubling, until one trial takes ≥ 40 ms, then `--trials` trials;
min and median per call (W3: 5 warm-up steps, then each step timed once). Output lines, as ours:
  "torch<version>-t<threads> W1_attn_manual_T256 min_us=… med_us=… GFLOPs_min=… GFLOPs_med=…"
  "… W3_train_tiny params=… step_ms_min=… step_ms_med=… tok/s_med=… tok/s_best=…"

The model is nanoGPT's (LayerNorm, exact GELU, MLP 4×, tied head), written the way PyTorch users
write it (a cached mask buffer, torch.softmax): it is the peer, so it must be idiomatic, not a copy
of our arithmetic. scripts/gpt_torch.py, which checks our checkpoints in PyTorch, spells the mask
variants and the empty-row rule out instead and has no KV cache.

Limits: Debian's python3-torch links the slow reference BLAS unless another libblas.so.3 comes
first on LD_LIBRARY_PATH; run_peers.sh puts Debian's OpenBLAS (extracted, not installed) there.
Two threads on a 2-core machine slow this small work down: quote one thread.
AP_BENCH_CPU_TIME=1 times this process's CPU time (time.process_time) instead of wall time, for a
loaded machine, as ours does.

  /usr/bin/python3 bench/peers/torch_peer.py [--threads 1] [--only w1,w2,w3,w4,w6,w7] [--trials 9]
                                             [--steps 30] [--quick]
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # gpt2s.py (W6's weights), beside this file
import gpt2s  # noqa: E402
import variants_model  # noqa: E402  (W7's model)

clock = time.process_time if os.environ.get("AP_BENCH_CPU_TIME") == "1" else time.perf_counter
VOCAB = 65


# ---------------------------------------------------------------- timing

def bench(tag, name, fn, flops=None, trials=9, min_trial_s=0.04):
    """Times fn() per call: (min, median) seconds; prints the workload's line."""
    fn()
    reps = 1
    while True:
        t0 = clock()
        for _ in range(reps):
            fn()
        if clock() - t0 > min_trial_s or reps >= 1 << 20:
            break
        reps *= 2
    ts = []
    for _ in range(trials):
        t0 = clock()
        for _ in range(reps):
            fn()
        ts.append((clock() - t0) / reps)
    mn, md = min(ts), statistics.median(ts)
    extra = f" GFLOPs_min={flops / mn * 1e-9:7.2f} GFLOPs_med={flops / md * 1e-9:7.2f}" if flops else ""
    print(f"{tag} {name:24s} min_us={mn * 1e6:10.2f} med_us={md * 1e6:10.2f}{extra} (reps={reps} trials={trials})", flush=True)
    return mn, md


# ---------------------------------------------------------------- the model (nanoGPT)

class CausalSelfAttention(nn.Module):
    def __init__(self, C, H, block):
        super().__init__()
        self.H = H
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.register_buffer("mask", torch.triu(torch.ones(block, block, dtype=torch.bool), 1))

    def forward(self, x, cache=None):
        """x (B, T, C); cache: a dict holding this layer's past 'k', 'v' (B, H, T_past, hs), or None."""
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            if cache.get("k") is not None:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        Tk = k.size(2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if T > 1:
            att = att.masked_fill(self.mask[Tk - T:Tk, :Tk], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, C, H, block, gelu="none"):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(C), CausalSelfAttention(C, H, block), nn.LayerNorm(C)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(approximate=gelu), nn.Linear(4 * C, C))

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, V=VOCAB, block=64, L=2, C=64, H=4, gelu="none"):
        """gelu: "none" the exact GELU (nanoGPT), "tanh" GPT-2's gelu_new."""
        super().__init__()
        self.block = block
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(block, C)
        self.h = nn.ModuleList(Block(C, H, block, gelu) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx, targets=None, caches=None, pos0=0):
        """idx (B, T) → (logits (B, T, V), the mean cross-entropy against targets or None)."""
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(pos0, pos0 + T))
        for i, b in enumerate(self.h):
            x = b(x, None if caches is None else caches[i])
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


# The two configurations of W3 (n_layer, n_embd, n_head, block_size); batch 16.
TINY = dict(L=2, C=64, H=4, block=64)
SMALL = dict(L=4, C=128, H=4, block=128)
BATCH = 16


# ---------------------------------------------------------------- the workloads

def attention(q, k, v, mask):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    att = att.masked_fill(mask, float("-inf"))
    return torch.softmax(att, dim=-1) @ v


def w1(tag, trials):
    has_sdpa = hasattr(F, "scaled_dot_product_attention")
    print(f"{tag} F.scaled_dot_product_attention available: {has_sdpa}", flush=True)
    d = 64
    with torch.inference_mode():
        for T in (64, 256, 1024):
            q, k, v = (torch.randn(T, d) for _ in range(3))
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            if has_sdpa:
                bench(tag, f"W1_attn_sdpa_T{T}", lambda: F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True),
                      4 * T * T * d, trials)
            bench(tag, f"W1_attn_manual_T{T}", lambda: attention(q, k, v, mask), 4 * T * T * d, trials)


def w2(tag, trials):
    with torch.inference_mode():
        for n in (64, 256, 512):
            a, b = torch.randn(n, n), torch.randn(n, n)
            c = torch.empty(n, n)
            bench(tag, f"W2_mm_n{n}", lambda: torch.mm(a, b, out=c), 2 * n ** 3, trials)


def w3(tag, name, cfg, steps, warmup=5, variants=None):
    """variants: W7's keyword arguments of variants_model.VariantGPT (None: W3's nanoGPT)."""
    torch.manual_seed(0)
    if variants is None:
        m = GPT(VOCAB, cfg["block"], cfg["L"], cfg["C"], cfg["H"])
    else:
        m = variants_model.VariantGPT(VOCAB, cfg["block"], cfg["L"], cfg["C"], cfg["H"], **variants)
    nparam = sum(p.numel() for p in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.1)
    data = torch.randint(0, VOCAB, (steps + warmup, BATCH, cfg["block"] + 1))

    def step(i):
        _, loss = m(data[i, :, :-1], data[i, :, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for i in range(warmup):
        step(i)
    ts = []
    for i in range(steps):
        t0 = clock()
        step(warmup + i)
        ts.append(clock() - t0)
    mn, md = min(ts), statistics.median(ts)
    tokens = BATCH * cfg["block"]
    print(f"{tag} {name:24s} params={nparam} step_ms_min={mn * 1e3:8.2f} step_ms_med={md * 1e3:8.2f} "
          f"tok/s_med={tokens / md:9.0f} tok/s_best={tokens / mn:9.0f} (steps={steps})", flush=True)


@torch.inference_mode()
def generate_uncached(m, n_new):
    """The context cropped to the last block_size tokens, a full forward per token (nanoGPT)."""
    idx = torch.zeros(1, 1, dtype=torch.long)
    for _ in range(n_new):
        logits, _ = m(idx[:, -m.block:])
        idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return idx


@torch.inference_mode()
def generate_cached(m, n_new):
    """One token per forward through the KV cache; positions are absolute, so block ≥ 1 + n_new."""
    caches = [dict() for _ in m.h]
    idx = torch.zeros(1, 1, dtype=torch.long)
    cur = idx
    for t in range(n_new):
        logits, _ = m(cur, caches=caches, pos0=t)
        cur = logits[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, cur], dim=1)
    return idx


def w4(tag, trials, n_new=256):
    torch.manual_seed(0)
    m64 = GPT(VOCAB, 64, 2, 64, 4).eval()
    _, md = bench(tag, "W4_gen256_nocache_blk64", lambda: generate_uncached(m64, n_new), trials=trials, min_trial_s=0)
    print(f"{tag}   -> tok/s_med={n_new / md:9.0f}", flush=True)
    torch.manual_seed(0)
    m257 = GPT(VOCAB, 257, 2, 64, 4).eval()
    if not torch.equal(generate_uncached(m257, 32), generate_cached(m257, 32)):
        print(f"{tag} W4: the KV cache generated other tokens than the full forward; not timed", flush=True)
        return
    _, md = bench(tag, "W4_gen256_kvcache_blk257", lambda: generate_cached(m257, n_new), trials=trials, min_trial_s=0)
    print(f"{tag}   -> tok/s_med={n_new / md:9.0f}", flush=True)


# ---------------------------------------------------------------- W6: GPT-2 small's shape

def gpt2s_model():
    """GPT-2 small's shape with W6's weights (gpt2s.py: the same as ours and the ONNX graph's)."""
    c = gpt2s.CONFIG
    m = GPT(c["vocab_size"], c["block_size"], c["n_layer"], c["n_embd"], c["n_head"], gelu="tanh").eval()
    with torch.no_grad():
        for name, p in m.named_parameters():  # lm_head is wte (tied): named once
            name = "transformer." + name.replace(".mlp.0.", ".mlp.c_fc.").replace(".mlp.2.", ".mlp.c_proj.")
            p.copy_(torch.from_numpy(gpt2s.tensor(name, tuple(p.shape))))
    return m


@torch.inference_mode()
def gpt2s_check(m):
    """What the runners compare (gpt2s.py): the prompt's last logits at CHECK_IDS, their argmax, and
    CHECK_TOKENS greedy tokens through the KV cache after the prompt (the first is that argmax)."""
    idx = torch.tensor([gpt2s.prompt()])
    last = m(idx)[0][0, -1]
    caches = [dict() for _ in m.h]
    m(idx, caches=caches)
    cur, greedy = last.argmax().view(1, 1), []
    for t in range(gpt2s.CHECK_TOKENS):
        greedy.append(int(cur))
        cur = m(cur, caches=caches, pos0=gpt2s.PROMPT_LEN + t)[0][:, -1].argmax(-1, keepdim=True)
    return {"argmax": int(last.argmax()), "logits": [float(last[j]) for j in gpt2s.CHECK_IDS], "check_ids": gpt2s.CHECK_IDS,
            "greedy": greedy, "prompt": gpt2s.prompt(), "tolerance": gpt2s.TOLERANCE}


def time_w6(tag, name, tokens, trials, warmup, prepare, run):
    """Times run() (prepare() before each, untimed); prints ms on the clock, CPU ms and tokens/s."""
    for _ in range(warmup):
        prepare()
        run()
    ts, cpu = [], []
    for _ in range(trials):
        prepare()
        c0, t0 = time.process_time(), clock()
        run()
        ts.append(clock() - t0)
        cpu.append(time.process_time() - c0)
    md = statistics.median(ts)
    per = f" ms/tok_med={md * 1e3 / tokens:.2f}" if "gen" in name else ""
    print(f"{tag} {name:24s} ms_min={min(ts) * 1e3:9.1f} ms_med={md * 1e3:9.1f} cpu_ms_med={statistics.median(cpu) * 1e3:.1f}"
          f"{per} tok/s_med={tokens / md:8.2f} (trials={trials})", flush=True)


@torch.inference_mode()
def w6(tag, quick):
    """The 64-token prompt's forward (every position's logits); 100 greedy tokens through the KV
    cache after the prompt (each: one token in, its logits, argmax), the cache refilled with the
    prompt before each trial, untimed. First the line the runners are compared by (gpt2s.py)."""
    m = gpt2s_model()
    idx = torch.tensor([gpt2s.prompt()])
    P, n = gpt2s.PROMPT_LEN, gpt2s.GEN_TOKENS
    check = gpt2s_check(m)
    print(f"{tag} W6_gpt2s_check params={sum(p.numel() for p in m.parameters())} argmax={check['argmax']} logits="
          + ",".join(f"{x:.6f}" for x in check["logits"]) + " greedy=" + ",".join(map(str, check["greedy"])), flush=True)
    time_w6(tag, "W6_gpt2s_prefill64", P, 2 if quick else 5, 1, lambda: None, lambda: m(idx))
    first = torch.tensor([[check["argmax"]]])
    state = {}

    def fill():
        state["caches"] = [dict() for _ in m.h]
        m(idx, caches=state["caches"])

    def gen():
        cur = first
        for t in range(n):
            cur = m(cur, caches=state["caches"], pos0=P + t)[0][:, -1].argmax(-1, keepdim=True)

    time_w6(tag, "W6_gpt2s_gen100", n, 1 if quick else 3, 0 if quick else 1, fill, gen)


def main():
    ap = argparse.ArgumentParser(description="PyTorch CPU on the workloads W1–W4, W6, W7 (bench/README.md).")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="w1,w2,w3,w4", help="the workloads, comma-separated")
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--steps", type=int, default=30, help="timed training steps of the tiny model (small: half, ≥ 10)")
    ap.add_argument("--quick", action="store_true", help="3 trials, 5 and 3 training steps: proves it runs, measures nothing")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    only = set(args.only.split(","))
    tag = f"torch{torch.__version__}-t{args.threads}"
    trials = 3 if args.quick else args.trials
    if "w1" in only:
        w1(tag, trials)
    if "w2" in only:
        w2(tag, trials)
    if "w3" in only:
        w3(tag, "W3_train_tiny", TINY, 5 if args.quick else args.steps)
        w3(tag, "W3_train_small", SMALL, 3 if args.quick else max(10, args.steps // 2))
    if "w7" in only:
        for name, (cfg, variants) in variants_model.W7.items():
            small = cfg["L"] > 2
            steps = (3 if small else 5) if args.quick else (max(10, args.steps // 2) if small else args.steps)
            w3(tag, name, cfg, steps, variants=variants)
    if "w4" in only:
        w4(tag, 3 if args.quick else max(5, trials // 2))
    if "w6" in only:
        w6(tag, args.quick)


if __name__ == "__main__":
    main()
