"""BERT encoder: word, position and segment embeddings, two post-norm encoder layers with an attention mask from the inputs, tanh pooler on the first token."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "BERT encoder with pooler"
KBENCH_SMALL = {"batch_size": 3, "seq_len": 16, "vocab_size": 128, "d_model": 32, "num_heads": 4, "d_ff": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.034 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.08, "rtol": 0.08}}

batch_size = 16
seq_len = 512
vocab_size = 30522
d_model = 768
num_heads = 12
d_ff = 3072
num_layers = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Layer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attn_out = nn.Linear(d_model, d_model)
        self.norm1 = random_norm(nn.LayerNorm(d_model, eps=1e-12))
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.norm2 = random_norm(nn.LayerNorm(d_model, eps=1e-12))
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(b, s, d)
        x = self.norm1(x + self.attn_out(att))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


class Model(nn.Module):
    def __init__(self, vocab_size: int, max_len: int, d_model: int, num_heads: int, d_ff: int, num_layers: int):
        super().__init__()
        self.word = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.segment = nn.Embedding(2, d_model)
        for emb in (self.word, self.position, self.segment):
            nn.init.normal_(emb.weight, std=0.02)
        self.embed_norm = random_norm(nn.LayerNorm(d_model, eps=1e-12))
        self.layers = nn.ModuleList(Layer(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.pooler = nn.Linear(d_model, d_model)
        nn.init.normal_(self.pooler.weight, std=d_model ** -0.5)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor, attention_mask: torch.Tensor):
        # input_ids, token_type_ids: (batch, seq) int64; attention_mask: (batch, seq) int64, 1 = token, 0 = padding
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word(input_ids) + self.position(positions)[None] + self.segment(token_type_ids)
        x = self.embed_norm(x)
        keep = attention_mask.bool()[:, None, None, :]
        for layer in self.layers:
            x = layer(x, keep)
        return x, torch.tanh(self.pooler(x[:, 0]))


def get_inputs():
    input_ids = torch.randint(0, vocab_size, (batch_size, seq_len))
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size,))
    first_segment = (torch.rand(batch_size) * lengths).long()
    positions = torch.arange(seq_len)[None, :]
    token_type_ids = (positions >= first_segment[:, None]).long()
    attention_mask = (positions < lengths[:, None]).long()
    return [input_ids, token_type_ids, attention_mask]


def get_init_inputs():
    return [vocab_size, seq_len, d_model, num_heads, d_ff, num_layers]


def kbench_flops():
    n = batch_size * seq_len
    layer = 2 * n * (4 * d_model * d_model + 2 * d_model * d_ff) + 4 * batch_size * seq_len * seq_len * d_model
    layer += 5 * batch_size * num_heads * seq_len * seq_len + 8 * n * d_ff + 20 * n * d_model
    return num_layers * layer + 10 * n * d_model + 2 * batch_size * d_model * d_model


def kbench_bytes():
    # only the looked-up rows of the word embedding need to be read
    n = batch_size * seq_len
    layers = num_layers * (4 * d_model * d_model + 2 * d_model * d_ff + 9 * d_model + d_ff)
    embeddings = (n + seq_len + 2) * d_model + 2 * d_model
    return 4 * (layers + embeddings + d_model * d_model + d_model + n * d_model + batch_size * d_model) + 3 * 8 * n
