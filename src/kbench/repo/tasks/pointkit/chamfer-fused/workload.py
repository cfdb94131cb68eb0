"""pointkit/chamfer-fused: the Chamfer distance between two batches of clouds (a reconstruction loss).

The clouds fill a cube whose side grows with the number of points (SIDE**3 ~ points), so a
point's nearest neighbour is about one unit away and the result is of order 1 at every size.
In the unit cube 8192 points are 0.03 apart and the result is 0.0018: the judge's float32
tolerance (atol 1e-4) is then 5% of it, larger than the spread between two input draws
(about 2e-5), so a wrong kernel off by a few percent passed and the outputs of two seeds
compared equal. At this scale the result is about 0.7, two draws differ by about 1%, and
float32 rounding (the direct differences each implementation computes agree to a few ulp)
is far inside rtol 1e-4.
"""

import torch

from pointkit import chamfer_distance

BATCH = 4
POINTS_A = 8192
POINTS_B = 8192
SIDE = 20.0
KBENCH_SMALL = {"BATCH": 2, "POINTS_A": 40, "POINTS_B": 70, "SIDE": 4.0}


class Model(torch.nn.Module):
    def forward(self, a, b):
        return chamfer_distance(a, b)


def get_inputs():
    return [torch.rand(BATCH, POINTS_A, 3) * SIDE, torch.rand(BATCH, POINTS_B, 3) * SIDE]


def get_init_inputs():
    return []
