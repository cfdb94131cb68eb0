"""tinylm/ragged-decode: decoding a batch whose sequences are at different positions (continuous batching).

The cache holds CONTEXT positions of keys and values (inputs, as if prefilled); each
sequence goes on from its own length, one token per step for STEPS steps.
"""

import torch

from tinylm import ModelConfig, Transformer, random_checkpoint

# Sized so that the batched step's time is the GPU's: 1 GiB of keys and 1 GiB of values read per layer and
# step, against some two hundred launches; at 32 x 512 x 512 the expert's 13-21 ms were the host's, and
# moved by a fifth from round to round (docs/tasks-suite.md).
BATCH = 64
CONTEXT = 4096
STEPS = 4
DIM = 1024
HEADS = 8
LAYERS = 2
VOCAB = 1024
KBENCH_SMALL = {"BATCH": 3, "CONTEXT": 10, "STEPS": 2, "DIM": 32, "HEADS": 4, "VOCAB": 64}


def config():
    return ModelConfig(vocab_size=VOCAB, dim=DIM, n_layers=LAYERS, n_heads=HEADS, max_seq_len=CONTEXT + STEPS)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        cfg = config()
        self.model = Transformer.from_checkpoint(cfg, random_checkpoint(cfg))

    def forward(self, context_k, context_v, lengths, tokens):
        cache = self.model.new_cache(BATCH, CONTEXT + STEPS, device=tokens.device)
        for layer in range(LAYERS):
            cache.update(layer, 0, context_k[layer], context_v[layer])
        steps = [self.model.decode(tokens[:, s], cache, lengths + s) for s in range(STEPS)]
        return torch.stack(steps, dim=1)


def get_inputs():
    head_dim = DIM // HEADS
    return [torch.randn(LAYERS, BATCH, CONTEXT, HEADS, head_dim),
            torch.randn(LAYERS, BATCH, CONTEXT, HEADS, head_dim),
            torch.randint(1, CONTEXT, (BATCH,)),
            torch.randint(0, VOCAB, (BATCH, STEPS))]


def get_init_inputs():
    return []
