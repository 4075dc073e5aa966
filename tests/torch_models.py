"""torch_models.py — what the PyTorch ctests (gpt_torch_test.py, walk_torch_test.py) share: the
skip where PyTorch is missing, running a command, and the small models they train with the `gpt`
CLI and then load into scripts/gpt_torch.py's nanoGPT model.

    from torch_models import require_torch, run, train_small, GRAMMAR, SUMS_INCLUSIVE_NAIVE
    require_torch("walk_torch")                # exits 77 (skipped) without PyTorch
    ckpt = train_small(gpt, path, GRAMMAR, steps=80)

A model is 2 layers, n_embd 32, 4 heads, block_size 16, batch 8, lr 1e-2 with 10 warm-up steps:
a few seconds of training, enough for logits well away from uniform. GRAMMAR (the strict mask,
the stable softmax) and SUMS_INCLUSIVE_NAIVE (the inclusive mask, whose first row sees nothing,
and the naive softmax) are (the training data's options, a prompt the model knows).
"""
import subprocess
import sys

GRAMMAR = (["--task", "grammar", "--n-chars", "20000"], "the cat sees a ")
SUMS_INCLUSIVE_NAIVE = (["--task", "sums", "--n-chars", "20000", "--mask", "inclusive", "--softmax", "naive"],
                        "12+34=4")


def require_torch(test):
    """Exits 77 (ctest: skipped) with the reason where this interpreter cannot import torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print(f"{test}: skipped: PyTorch is not installed for " + sys.executable +
              " (Debian: apt-get install python3-torch)")
        sys.exit(77)


def run(args, stdin=None, expect=0, echo=True):
    """Runs a command; its output (printed when echo) as text. Exits when its status is not `expect`."""
    out = subprocess.run(args, input=stdin, capture_output=True, text=True, encoding="utf-8")
    if echo:
        print("$ " + " ".join(args) + "\n" + out.stdout + out.stderr, end="")
    if out.returncode != expect:
        shown = "" if echo else f"$ {' '.join(args)}\n{out.stdout}{out.stderr}"
        sys.exit(f"{shown}exit status {out.returncode}, expected {expect}")
    return out.stdout + out.stderr if echo else out.stdout


def train_small(gpt, path, data, steps):
    """Trains a small model on `data` (GRAMMAR, SUMS_INCLUSIVE_NAIVE, or other data options) into path."""
    options = data[0] if isinstance(data, tuple) else data
    run([gpt, "train", "-o", path] + options +
        ["--n-layer", "2", "--n-embd", "32", "--n-head", "4", "--block-size", "16", "--batch-size", "8",
         "--steps", str(steps), "--lr", "1e-2", "--warmup-steps", "10", "--quiet"])
    return path
