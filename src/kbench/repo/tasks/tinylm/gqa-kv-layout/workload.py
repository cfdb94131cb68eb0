"""tinylm/gqa-kv-layout: a few decode steps after a long context, with grouped-query attention.

The context's keys and values are inputs (as if a prefill had run) written into the
cache through its public ``update``; then STEPS tokens are decoded one at a time.

The sizes make the key-value traffic, not the host, set the time. This model issues about
300 PyTorch operations per layer and step (some 5000 a call, counted with the profiler)
whatever the sizes: ~30 ms of host time, what both sides measured on an H200 at BATCH 8 x
CONTEXT 8192 (30.3 and 30.4 ms), where the base's repeated keys and values moved 2.4 GB per
step and layer, under 1 ms on the GPU. At BATCH 16 x CONTEXT 32768 the base reads the cache
(2.1 GB per step and layer), writes it four times over (8.6 GB) and reads that back in the
two matrix products (8.6 GB): ~19 GB, ~5 ms at the H200's bandwidth, ~80 ms over 16 steps
and layers. The expert reads the 2.1 GB once (~0.6 ms; ~14 ms a call with the cache's
set-up), so the host's ~30 ms bounds it: about 2.5x. The base holds ~17 GB of GPU memory.
"""

import torch

from tinylm import ModelConfig, Transformer, random_checkpoint

BATCH = 16
CONTEXT = 32768
STEPS = 8
DIM = 2048
HEADS = 32
KV_HEADS = 8
LAYERS = 2
VOCAB = 1024
KBENCH_SMALL = {"BATCH": 2, "CONTEXT": 12, "STEPS": 2, "DIM": 64, "HEADS": 8, "KV_HEADS": 2, "VOCAB": 64}


def config():
    return ModelConfig(vocab_size=VOCAB, dim=DIM, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=KV_HEADS,
                       hidden_dim=2 * DIM, max_seq_len=CONTEXT + STEPS)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        cfg = config()
        self.model = Transformer.from_checkpoint(cfg, random_checkpoint(cfg))

    def forward(self, context_k, context_v, tokens):
        cache = self.model.new_cache(BATCH, CONTEXT + STEPS, device=tokens.device)
        for layer in range(LAYERS):
            cache.update(layer, 0, context_k[layer], context_v[layer])
        steps = [self.model.decode(tokens[:, s], cache, CONTEXT + s) for s in range(STEPS)]
        return torch.stack(steps, dim=1)


def get_inputs():
    head_dim = DIM // HEADS
    return [torch.randn(LAYERS, BATCH, CONTEXT, KV_HEADS, head_dim),
            torch.randn(LAYERS, BATCH, CONTEXT, KV_HEADS, head_dim),
            torch.randint(0, VOCAB, (BATCH, STEPS))]


def get_init_inputs():
    return []
