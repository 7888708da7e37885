"""Learned generators: a network from a file (`checkpoint`) and the shipped `faces-cvae`.

- `checkpoint.py`: any generator network exported with `torch.export` (TorchScript and ONNX
  accepted), described by a TOML spec (`spec.py`); its conditions and latent code form the space.
- `faces_cvae.py`: the shipped conditional VAE, loaded through the same plug-in.
- `train.py`, `model.py`, `data.py`: how `faces-cvae` was made (`python -m generators.learned.train`).
"""
