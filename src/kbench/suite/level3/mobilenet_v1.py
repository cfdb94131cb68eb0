"""MobileNet v1 classifier: a strided 3x3 stem, thirteen depthwise-separable conv/BN/ReLU layers, average pool, linear head."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "MobileNet v1"
KBENCH_SMALL = {"batch_size": 4, "image_size": 64, "width": 4, "num_classes": 10}
# float32 only: in bfloat16 27 batch-normalised layers put errors of up to 0.2 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)

batch_size = 32
image_size = 224
width = 32
num_classes = 1000

# (output channels in multiples of `width`, stride) of each depthwise-separable layer
PLAN = [(2, 1), (4, 2), (4, 1), (8, 2), (8, 1), (16, 2)] + [(16, 1)] * 5 + [(32, 2), (32, 1)]


def conv_bn(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> nn.Sequential:
    bn = nn.BatchNorm2d(cout)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups, bias=False), bn, nn.ReLU()
    )


class Model(nn.Module):
    def __init__(self, width: int, num_classes: int):
        super().__init__()
        layers, c = [conv_bn(3, width, 3, 2)], width
        for mult, stride in PLAN:
            out = mult * width
            layers += [conv_bn(c, c, 3, stride, groups=c), conv_bn(c, out, 1, 1)]
            c = out
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).mean(dim=(2, 3)))


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [width, num_classes]


def kbench_flops():
    size = image_size // 2
    total, c = size * size * width * (2 * 27 + 10), width
    for mult, stride in PLAN:
        size //= stride
        out = mult * width
        total += size * size * (c * (2 * 9 + 10) + out * (2 * c + 10))
        c = out
    return batch_size * (total + 2 * c * num_classes)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
