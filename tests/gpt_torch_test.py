#!/usr/bin/env python3
"""gpt_torch_test.py — ctest `gpt_torch`: scripts/gpt_torch.py as a learner runs it.

    gpt_torch_test.py GPT WORKDIR

Trains three small models with the `gpt` CLI (torch_models.py: the grammar task with the strict
mask and the stable softmax; the sums task with the inclusive mask, whose first row sees nothing,
and the naive softmax; a Chinese text), 120 steps each, enough for logits well away from uniform,
then runs `gpt_torch.py FILE --prompt TEXT --check` on each: PyTorch's logits must equal the
project's within the script's tolerance. It also checks that --check can fail: against a `gpt`
whose logits are nudged by 1e-3 it must exit 1. Exits 77 (skipped) where PyTorch is not installed.
"""
import json
import os
import sys

from torch_models import GRAMMAR, SUMS_INCLUSIVE_NAIVE, require_torch, run, train_small

require_torch("gpt_torch")

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "gpt_torch.py")


def main():
    gpt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    text = os.path.join(work, "gpt_torch_text.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("注意力就是你所需要的。attention is all you need.\n" * 20)
    cases = [("grammar",) + GRAMMAR, ("inclusive_naive",) + SUMS_INCLUSIVE_NAIVE, ("chinese", ["--text", text], "注意力就是你")]
    for name, data, prompt in cases:
        ckpt = os.path.join(work, f"gpt_torch_{name}.safetensors")
        train_small(gpt, ckpt, data, steps=120)
        out = run([sys.executable, SCRIPT, ckpt, "--prompt", prompt, "--check", "--gpt", gpt])
        line = next(l for l in out.splitlines() if l.startswith("max |project − PyTorch|"))
        largest = float(line.split("largest |logit| ")[1].split(")")[0])
        if largest < 1.0:
            sys.exit(f"{name}: the logits are tiny ({largest}): the model did not train, so the check proves little")

    # --check must be able to fail: a `gpt` whose logits are off by 1e-3 in one place.
    ckpt = os.path.join(work, "gpt_torch_grammar.safetensors")
    fake = os.path.join(work, "gpt_torch_fake_gpt.py")
    with open(fake, "w", encoding="utf-8") as f:
        f.write("import json, subprocess, sys\n"
                f"out = json.loads(subprocess.run([{gpt!r}] + sys.argv[1:], capture_output=True, text=True).stdout)\n"
                "out['logits'][-1][0] += 1e-3\n"
                "print(json.dumps(out))\n")
    wrapper = os.path.join(work, "gpt_torch_fake_gpt")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write(f"#!/bin/sh\nexec {json.dumps(sys.executable)} {json.dumps(fake)} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    out = run([sys.executable, SCRIPT, ckpt, "--prompt", "the cat", "--check", "--gpt", wrapper], expect=1)
    if "FAILED" not in out:
        sys.exit("the nudged logits did not fail the check with its message")
    print("gpt_torch: ok (the check also fails when it should)")


if __name__ == "__main__":
    main()
