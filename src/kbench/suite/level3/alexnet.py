"""AlexNet (without local response norm): five convolutions with ReLU and max-pooling, then three fully connected layers."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "AlexNet"
KBENCH_SMALL = {"batch_size": 2, "image_size": 67, "width": 8, "pool_size": 2, "fc_hidden": 64, "num_classes": 10}
# float32 only: in bfloat16 eight layers without normalisation put errors of up to 0.07 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.069 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 64
image_size = 224
width = 64  # channels of the first convolution; the others scale with it
pool_size = 6
fc_hidden = 4096
num_classes = 1000


class Model(nn.Module):
    def __init__(self, width: int, pool_size: int, fc_hidden: int, num_classes: int):
        super().__init__()
        c1, c2, c3, c4 = width, 3 * width, 6 * width, 4 * width
        self.features = nn.Sequential(
            nn.Conv2d(3, c1, 11, stride=4, padding=2), nn.ReLU(),
            nn.MaxPool2d(3, stride=2),
            nn.Conv2d(c1, c2, 5, padding=2), nn.ReLU(),
            nn.MaxPool2d(3, stride=2),
            nn.Conv2d(c2, c3, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c3, c4, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c4, c4, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(3, stride=2),
        )
        self.pool = nn.AdaptiveAvgPool2d(pool_size)
        self.classifier = nn.Sequential(
            nn.Linear(c4 * pool_size * pool_size, fc_hidden), nn.ReLU(),
            nn.Linear(fc_hidden, fc_hidden), nn.ReLU(),
            nn.Linear(fc_hidden, num_classes),
        )
        # Kaiming init keeps the scale through eight ReLU layers without normalisation.
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        nn.init.normal_(self.classifier[-1].weight, std=fc_hidden ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x)).flatten(1)
        return self.classifier(x)


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [width, pool_size, fc_hidden, num_classes]


def _conv_out(n, k, s, p):
    return (n + 2 * p - k) // s + 1


def kbench_flops():
    c1, c2, c3, c4 = width, 3 * width, 6 * width, 4 * width
    s1 = _conv_out(image_size, 11, 4, 2)
    p1 = _conv_out(s1, 3, 2, 0)
    p2 = _conv_out(p1, 3, 2, 0)
    conv = 2 * (s1 * s1 * c1 * 3 * 121 + p1 * p1 * c2 * c1 * 25 + p2 * p2 * (c3 * c2 + c4 * c3 + c4 * c4) * 9)
    fc = 2 * (c4 * pool_size * pool_size * fc_hidden + fc_hidden * fc_hidden + fc_hidden * num_classes)
    return batch_size * (conv + fc)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
