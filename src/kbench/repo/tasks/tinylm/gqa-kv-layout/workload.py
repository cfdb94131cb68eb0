"""tinylm/gqa-kv-layout: a few decode steps after a long context, with grouped-query attention.

The context's keys and values are inputs (as if a prefill had run) written into the
cache through its public ``update``; then STEPS tokens are decoded one at a time.
"""

import torch

from tinylm import ModelConfig, Transformer, random_checkpoint

BATCH = 8
CONTEXT = 8192
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
