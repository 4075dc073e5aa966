"""safetensors_writer.py — our own writer of the safetensors format for the tests that make Hugging
Face folders (hf_folder_test.py, llama_torch_test.py): an 8-byte little-endian header length, the
JSON header padded with spaces to 8 bytes, then each tensor's bytes in order. F32, F16 and BF16
from torch tensors; nothing else."""
import json
import struct


def tensor_bytes(t, dtype):
    """The little-endian bytes of torch tensor t stored as dtype (F32, F16 or BF16)."""
    import torch
    if dtype == "F32":
        return t.to(torch.float32).numpy().astype("<f4").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()


def write_safetensors(path, tensors):
    """tensors: list of (name, torch tensor, dtype). Returns the data section's offset (8 + header)."""
    header, data = {}, b""
    for name, t, dtype in tensors:
        b = tensor_bytes(t, dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
    return 8 + len(h)
