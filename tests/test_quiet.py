"""The quiet-GPU check's decision, with a probe and a clock made by hand (the probe
itself runs on a GPU: tests/exploits queued_gpu_work)."""

from kbench.judge.protocol.quiet import BUSY_MS, WAIT_SECONDS, busy_gpu_finding


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_quiet_gpu_is_passed_at_once():
    probes = []
    assert busy_gpu_finding(lambda: probes.append(1) or [0.02, 0.01, 0.015]) is None
    assert len(probes) == 1


def test_a_gpu_that_drains_within_the_wait_is_passed():
    time = FakeTime()
    answers = iter([[5.0, 4.0], [2.1, 3.0], [0.03, 0.02]])
    assert busy_gpu_finding(lambda: next(answers), time.clock, time.sleep) is None
    assert 0 < time.now < WAIT_SECONDS


def test_a_gpu_still_busy_after_the_wait_is_the_candidates_doing():
    time = FakeTime()
    finding = busy_gpu_finding(lambda: [BUSY_MS * 4, BUSY_MS * 3], time.clock, time.sleep)
    assert time.now >= WAIT_SECONDS
    assert finding is not None and "still busy" in finding and f"{BUSY_MS * 3:.2f} ms" in finding
