"""Print the results folder of the GPU at hand, benchmarks/results/<folder>/: the GPU's model,
e.g. h200 for "NVIDIA H200" and h100 for "NVIDIA H100 80GB HBM3"."""

import re

import torch


def folder(name: str) -> str:
    model = re.search(r"\b[A-Z]+\d{2,4}\b", name.replace("NVIDIA", ""))
    return (model.group(0) if model else name.split()[-1]).lower()


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("gpu_folder.py: no CUDA GPU is visible")
    print(folder(torch.cuda.get_device_name()))
