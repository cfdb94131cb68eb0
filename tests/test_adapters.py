"""The adapters run episodes end to end with the real libraries (verifiers, inspect_ai, TRL's own reward
code) against a stand-in model that replies with fixed completions: a cheat (tests/exploits, rejected by
the guard) and an honest Triton ReLU (the suite's example). The judge is the real one; its verdicts are
memoised by (problem, source) for this module, so the whole file makes two real evaluations (the cheat's
is static, the honest one a few seconds on a CPU) however many adapters judge them. Infrastructure
failures are staged with an evaluate that raises, and the reward service with a stand-in client."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from kbench.adapters import AdapterError, InfrastructureFailure, Judge, KbenchReward, code_of, compute_score, trl_rows
from kbench.judge import evaluate as real_evaluate
from kbench.rewards import Reward

ROOT = Path(__file__).resolve().parent.parent
HONEST = (ROOT / "src/kbench/suite/examples/relu.py").read_text()
CHEAT = (ROOT / "tests/exploits/patch_time_plain.py").read_text()  # rejected: monkeypatch (a static rule)
PROBLEM = "level1/relu"
OPTIONS = {"trials": 1, "measure_time": False}  # correctness only: the speedup shape needs a GPU's timing
INFRA_MARK = "# stage: the machine fails"


def reply(source: str) -> str:
    return f"Here is my kernel.\n\n```python\n{source}```\n"


class Memo:
    """kbench.judge.evaluate, called once per (problem, source); a source carrying INFRA_MARK stands for
    an evaluation the machine could not finish."""

    def __init__(self) -> None:
        self.verdicts: dict[str, object] = {}
        self.real_calls = 0

    def __call__(self, problem, solution, device=None, **options):
        if INFRA_MARK in solution.source:
            raise OSError("worker lost: the machine went away")
        # Every caller here judges correctness only (trials 1, untimed): the options do not change the verdict.
        key = hashlib.sha256(f"{getattr(problem, 'id', problem)}\0{solution.source}".encode()).hexdigest()
        if key not in self.verdicts:
            self.real_calls += 1
            self.verdicts[key] = real_evaluate(problem, solution, device, **options)
        return self.verdicts[key]


@pytest.fixture(scope="module")
def memo() -> Memo:
    return Memo()


@pytest.fixture
def judge(memo) -> Judge:
    return Judge(shape="correct", device="cpu", options=dict(OPTIONS), evaluate=memo)


# --- the shared judge --------------------------------------------------------------------------


def test_code_is_taken_from_any_completion_form():
    messages = [{"role": "assistant", "content": reply(HONEST)}]
    assert "class ModelNew" in code_of(messages) and code_of(reply(HONEST)) == reply(HONEST)
    assert code_of([{"role": "user", "content": "x"}]) == ""
    assert code_of(SimpleNamespace(role="assistant", content=[{"type": "text", "text": "hi"}])) == "hi"


def test_a_completion_without_code_is_a_zero_with_the_parsers_reason_and_judges_nothing(judge, memo):
    before = memo.real_calls
    judged = judge.judge(PROBLEM, "I would write a kernel, but here is prose only.")
    assert judged.value == 0.0 and judged.reward.status == "no_code"
    assert "no fenced code block" in judged.reward.reason and "status: no_code" in judged.feedback
    assert memo.real_calls == before


def test_an_unknown_shape_is_refused_when_the_adapter_is_made():
    with pytest.raises(AdapterError, match="unknown reward shape"):
        Judge(shape="fastest")


def test_the_reward_service_is_used_when_named_and_its_failures_are_no_reward():
    class StandInClient:
        def __init__(self, fail: bool) -> None:
            self.fail, self.asked = fail, []

        def judge(self, problem, source, shape, baseline):
            self.asked.append((problem, shape, baseline, "class ModelNew" in source))
            if self.fail:
                raise httpx.ConnectError("connection refused")
            return Reward(0.0, shape, None, "rejected", "rejected: monkeypatch: assigns time.perf_counter_ns")

    client = StandInClient(fail=False)
    judged = Judge(shape="correct", client=client).judge(PROBLEM, reply(CHEAT))
    assert client.asked == [(PROBLEM, "correct", "eager", True)]
    assert judged.value == 0.0 and "monkeypatch" in judged.feedback and judged.verdict is None
    down = Judge(shape="correct", client=StandInClient(fail=True)).judge(PROBLEM, reply(HONEST))
    assert down.value is None and down.reward.status == "infra_error" and "connection refused" in down.reward.reason


# --- verifiers -----------------------------------------------------------------------------------


def stand_in_openai(replies: list[str], seen: list):
    """An AsyncOpenAI client whose server is this function: each request gets the next fixed reply."""
    from openai import AsyncOpenAI

    answers = iter(replies)

    def serve(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body["messages"])
        message = {"role": "assistant", "content": next(answers)}
        return httpx.Response(200, json={
            "id": "stand-in", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    return AsyncOpenAI(api_key="none", base_url="http://stand-in/v1",
                       http_client=httpx.AsyncClient(transport=httpx.MockTransport(serve)))


def run_verifiers_episode(judge: Judge, replies: list[str], max_turns: int = 3):
    pytest.importorskip("verifiers", reason="kbench[verifiers] (in the test extra)")
    from verifiers.clients import OpenAIChatCompletionsClient

    from kbench.adapters.verifiers_env import load_environment

    seen: list = []
    env = load_environment(problems=[PROBLEM], judge=judge, max_turns=max_turns)
    client = OpenAIChatCompletionsClient(stand_in_openai(replies, seen))
    out = env.evaluate_sync(client=client, model="stand-in", num_examples=1, rollouts_per_example=1,
                            state_columns=["kbench"])
    return out["outputs"][0], seen


def test_verifiers_episode_feeds_the_judges_verdict_back_and_rewards_the_last_reply(judge):
    output, seen = run_verifiers_episode(judge, [reply(CHEAT), reply(HONEST)])
    assert [t["status"] for t in output["kbench"]] == ["rejected", "correct"]
    assert output["reward"] == 1.0 and output["error"] is None
    assert output["metrics"]["kbench_correct"] == 1.0 and output["metrics"]["kbench_no_reward"] == 0.0
    first, second = seen
    assert "level1/relu" in first[0]["content"] or "ModelNew" in first[0]["content"]  # kbench's own prompt
    feedback = second[-1]["content"]
    assert "status: rejected" in feedback and "monkeypatch" in feedback and "turn 1" in feedback
    assert output["stop_condition"] == "has_final_env_response"  # correct under `correct`: nothing left to gain


def test_verifiers_loads_the_environment_by_its_module_name():
    vf = pytest.importorskip("verifiers", reason="kbench[verifiers] (in the test extra)")
    env = vf.load_environment("kbench.adapters.verifiers_env", problems=[PROBLEM], shape="fast_1.0", max_turns=2)
    row = env.get_dataset()[0]
    assert row["info"]["problem"] == PROBLEM and "ModelNew" in row["prompt"][-1]["content"]
    assert (env.judge.shape, env.max_turns) == ("fast_1.0", 2)


def test_verifiers_infrastructure_failure_is_an_errored_rollout_never_a_reward(judge):
    output, _ = run_verifiers_episode(judge, [reply(HONEST + INFRA_MARK + "\n")], max_turns=1)
    assert output["error"] is not None and "KbenchInfraError" in json.dumps(output["error"])
    assert output["metrics"]["kbench_no_reward"] == 1.0 and output["kbench"][0]["value"] is None


# --- inspect_ai ------------------------------------------------------------------------------------


def mock_model(replies: list[str]):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = []
    for text in replies:
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)


def run_inspect(judge: Judge, replies: list[str], turns: int, tmp_path: Path):
    pytest.importorskip("inspect_ai", reason="kbench[inspect] (in the test extra)")
    from inspect_ai import eval as inspect_eval

    from kbench.adapters.inspect_task import kbench

    logs = inspect_eval(kbench(problems=PROBLEM, judge=judge, turns=turns), model=mock_model(replies),
                        log_dir=str(tmp_path), display="none")
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_inspect_eval_with_mockllm_scores_by_the_judge_with_its_feedback_between_turns(judge, tmp_path):
    log = run_inspect(judge, [reply(CHEAT), reply(HONEST)], turns=2, tmp_path=tmp_path)
    sample = log.samples[0]
    assert [m.role for m in sample.messages] == ["user", "assistant", "user", "assistant"]
    assert "monkeypatch" in sample.messages[2].text
    score = sample.scores["kbench_scorer"]
    assert score.value == 1.0 and score.answer == "correct"
    assert score.metadata["reward"]["provenance"]["sandbox"]
    assert log.results.scores[0].metrics["mean"].value == 1.0


def test_inspect_scores_a_cheat_zero_with_its_reason_and_an_infra_failure_unscored(judge, tmp_path):
    cheat = run_inspect(judge, [reply(CHEAT)], turns=1, tmp_path=tmp_path).samples[0].scores["kbench_scorer"]
    assert cheat.value == 0.0 and cheat.answer == "rejected" and "monkeypatch" in cheat.explanation
    infra = run_inspect(judge, [reply(HONEST + INFRA_MARK + "\n")], turns=1, tmp_path=tmp_path)
    score = infra.samples[0].scores["kbench_scorer"]
    assert math.isnan(score.value) and "infra_error" in score.reason and "worker lost" in score.explanation


# --- TRL and veRL -----------------------------------------------------------------------------------


def test_trl_reward_through_grpo_trainers_own_reward_code(judge):
    """GRPOTrainer._calculate_rewards (TRL's code, on a stand-in trainer) calls the function with the
    dataset's columns; None (no reward) becomes NaN there, which TRL leaves out of the group baseline."""
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl", reason="kbench[trl] (in the test extra)")
    from collections import defaultdict

    from accelerate import PartialState

    PartialState()  # TRL logs through accelerate (a warning for the row with no reward): one CPU process
    reward = KbenchReward(judge)
    row = trl_rows([PROBLEM])[0]
    completions = [[{"role": "assistant", "content": c}] for c in
                   (reply(HONEST), reply(CHEAT), "no code at all", reply(HONEST + INFRA_MARK + "\n"))]
    inputs = [dict(row) for _ in completions]
    extras, metrics = defaultdict(list), defaultdict(list)
    trainer = SimpleNamespace(
        accelerator=SimpleNamespace(device=torch.device("cpu"), process_index=0, is_main_process=True),
        reward_funcs=[reward],
        reward_processing_classes=[None], reward_func_names=[reward.__name__], state=SimpleNamespace(global_step=0),
        environments=None, args=SimpleNamespace(report_to=[]),
        _log_completion_extra=lambda column, values: extras[column].extend(values),
        _log_metric=lambda name, value: metrics[name].append(value))
    rewards = trl.GRPOTrainer._calculate_rewards(trainer, inputs, [row["prompt"]] * 4, completions, [[1]] * 4)
    values = rewards[:, 0].tolist()
    assert values[:3] == [1.0, 0.0, 0.0] and math.isnan(values[3])
    assert extras["kbench_status"] == ["correct", "rejected", "no_code", "infra_error"]
    assert metrics["kbench/no_reward"] == [0.25]


def test_trl_reward_needs_the_problem_column(judge):
    with pytest.raises(AdapterError, match="problem_id"):
        KbenchReward(judge)(prompts=["p"], completions=["c"], question=["q"])


def test_verl_compute_score_in_verls_calling_form(judge):
    honest = compute_score("kbench", reply(HONEST), PROBLEM, {"problem_id": PROBLEM}, judge=judge)
    assert honest == {"score": 1.0, "kbench_reward_valid": 1.0, "kbench_correct": 1.0}
    assert compute_score("kbench", reply(CHEAT), PROBLEM, judge=judge)["score"] == 0.0
    broken = reply(HONEST + INFRA_MARK + "\n")
    with pytest.raises(InfrastructureFailure, match="worker lost"):
        compute_score("kbench", broken, PROBLEM, judge=judge)
    chosen = compute_score("kbench", broken, PROBLEM, judge=judge, on_infra=0.0)
    assert chosen == {"score": 0.0, "kbench_reward_valid": 0.0, "kbench_correct": 0.0}
    with pytest.raises(AdapterError, match="ground_truth"):
        compute_score("kbench", reply(HONEST), None, judge=judge)
    with pytest.raises(AdapterError, match="on_infra"):
        compute_score("kbench", broken, PROBLEM, judge=judge, on_infra="zero")


def test_verl_reward_kwargs_make_one_judge_per_setting():
    """veRL passes reward_kwargs on every call: compute_score builds its Judge from them once (lists
    included), and a completion without code is 0 without running anything."""
    from kbench.adapters import reward_functions

    kwargs = {"shape": "correct", "device": "cpu", "baselines": ["eager"], "trials": 1}
    for _ in range(2):
        assert compute_score("kbench", "prose only", PROBLEM, **kwargs)["score"] == 0.0
    made = [j for j in reward_functions._JUDGES.values() if j.options == {"baselines": ["eager"], "trials": 1}]
    assert len(made) == 1 and made[0].shape == "correct"


def test_trl_reward_through_the_reward_service_in_one_batch(memo, tmp_path):
    """kbench serve (in this process, judging with this module's evaluate) behind the TRL reward function:
    the completions with code go in one batch, the one without is answered here."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from serve_fixtures import running

    from kbench.serve.jobs import JobStore
    from kbench.serve.service import JudgeSettings, Service, local_slots

    service = Service(JobStore(tmp_path / "jobs.db"), JudgeSettings(size="small", trials=1, measure_time=False),
                      local_slots(["cpu"]), tmp_path / "problems", evaluate=memo, problems={PROBLEM})
    with running(service) as url:
        reward = KbenchReward(shape="correct", service_url=url)
        values = reward(prompts=["p"] * 3, completions=[reply(HONEST), "prose only", reply(CHEAT)],
                        problem_id=[PROBLEM] * 3)
        assert values == [1.0, 0.0, 0.0]
        assert [j.reward.status for j in reward.last] == ["correct", "no_code", "rejected"]
        assert reward.last[0].reward.provenance["sandbox"]
    down = KbenchReward(shape="correct", service_url=url)(completions=[reply(HONEST)], problem_id=[PROBLEM])
    assert down == [None]  # the service is gone: no reward, never a zero


def test_the_module_made_two_real_evaluations(memo):
    assert memo.real_calls <= 2
