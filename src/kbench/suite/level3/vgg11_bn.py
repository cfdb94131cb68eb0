"""VGG-11 with batch norm (batch statistics): eight 3x3 conv/BN/ReLU layers in five max-pooled stages, then three fully connected layers."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "VGG-11 with batch norm"
KBENCH_SMALL = {"batch_size": 4, "image_size": 64, "width": 4, "pool_size": 2, "fc_hidden": 64, "num_classes": 10}
# float32 only: in bfloat16 eleven batch-normalised layers put errors of up to 0.12 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.1 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 8
image_size = 224
width = 64
pool_size = 7
fc_hidden = 4096
num_classes = 1000

# Output channels per layer, in multiples of `width`; "M" is a 2x2 max-pool.
PLAN = [1, "M", 2, "M", 4, 4, "M", 8, 8, "M", 8, 8, "M"]


class Model(nn.Module):
    def __init__(self, width: int, pool_size: int, fc_hidden: int, num_classes: int):
        super().__init__()
        layers, c = [], 3
        for item in PLAN:
            if item == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                out = item * width
                layers += [nn.Conv2d(c, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU()]
                c = out
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(pool_size)
        self.classifier = nn.Sequential(
            nn.Linear(c * pool_size * pool_size, fc_hidden), nn.ReLU(),
            nn.Linear(fc_hidden, fc_hidden), nn.ReLU(),
            nn.Linear(fc_hidden, num_classes),
        )
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.2)
                elif isinstance(m, nn.Linear):
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.normal_(self.classifier[-1].weight, std=fc_hidden ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.pool(self.features(x)).flatten(1))


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [width, pool_size, fc_hidden, num_classes]


def kbench_flops():
    total, c, size = 0, 3, image_size
    for item in PLAN:
        if item == "M":
            size //= 2
            continue
        out = item * width
        total += size * size * out * (2 * 9 * c + 10)
        c = out
    fc = 2 * (c * pool_size * pool_size * fc_hidden + fc_hidden * fc_hidden + fc_hidden * num_classes)
    return batch_size * (total + fc)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
