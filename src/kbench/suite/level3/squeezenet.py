"""SqueezeNet 1.1 classifier: strided stem, eight Fire modules (1x1 squeeze, parallel 1x1 and 3x3 expand) with max-pools, conv classifier, average pool."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "SqueezeNet 1.1"
KBENCH_SMALL = {"batch_size": 2, "image_size": 64, "width": 4, "num_classes": 10}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.016 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 64
image_size = 224
width = 16  # squeeze widths are multiples of 16
num_classes = 1000

# Fire modules: (squeeze width in multiples of `width`, expand width = 4x squeeze per branch); "M" = max-pool
PLAN = ["M", 1, 1, "M", 2, 2, "M", 3, 3, 4, 4]


class Fire(nn.Module):
    def __init__(self, cin: int, squeeze: int):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, 4 * squeeze, 1)
        self.expand3 = nn.Conv2d(squeeze, 4 * squeeze, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.expand1(s)), F.relu(self.expand3(s))], dim=1)


class Model(nn.Module):
    def __init__(self, width: int, num_classes: int):
        super().__init__()
        layers, c = [nn.Conv2d(3, 4 * width, 3, stride=2), nn.ReLU()], 4 * width
        for item in PLAN:
            if item == "M":
                layers.append(nn.MaxPool2d(3, stride=2, ceil_mode=True))
            else:
                layers.append(Fire(c, item * width))
                c = 8 * item * width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Conv2d(c, num_classes, 1)
        # Kaiming weights and small biases (PyTorch's default biases, up to 1/sqrt(fan-in)
        # of a 16-channel squeeze, would outweigh the signal and make every image look alike).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.normal_(m.bias, std=0.02)
        nn.init.normal_(self.classifier.weight, std=c ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.classifier(self.features(x))).mean(dim=(2, 3))


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [width, num_classes]


def kbench_flops():
    size = (image_size - 3) // 2 + 1
    total, c = size * size * 4 * width * (2 * 27 + 1), 4 * width
    for item in PLAN:
        if item == "M":
            size = -(-(size - 3) // 2) + 1
            total += size * size * c * 9
            continue
        s = item * width
        total += size * size * (s * (2 * c + 1) + 4 * s * (2 * s + 1) + 4 * s * (2 * 9 * s + 1))
        c = 8 * s
    return batch_size * (total + size * size * num_classes * (2 * c + 2))


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
