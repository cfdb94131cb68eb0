"""tinylm/prefill-last-logits: prefill of a batch of right-padded prompts, the step before generation."""

import torch

from tinylm import ModelConfig, Transformer, random_checkpoint

BATCH = 4
SEQ = 2048
DIM = 512
HEADS = 8
LAYERS = 2
VOCAB = 32000
KBENCH_SMALL = {"BATCH": 2, "SEQ": 6, "DIM": 32, "HEADS": 4, "VOCAB": 64}


def config():
    return ModelConfig(vocab_size=VOCAB, dim=DIM, n_layers=LAYERS, n_heads=HEADS, max_seq_len=SEQ)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        cfg = config()
        self.model = Transformer.from_checkpoint(cfg, random_checkpoint(cfg))

    def forward(self, tokens, lengths):
        cache = self.model.new_cache(BATCH, SEQ, device=tokens.device)
        return self.model.prefill(tokens, cache, lengths)


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ)), torch.randint(SEQ // 2, SEQ + 1, (BATCH,))]


def get_init_inputs():
    return []
