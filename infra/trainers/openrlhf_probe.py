"""OpenRLHF 0.11.2's own rollout, reward, advantage and replay-buffer code, run on CPU against the
project's reward service (test/training/real-openrlhf.test.ts drives it).

Reads JSON on stdin, {"runs": [run, ...]}, each run one training batch:
  {"urls": [reward URLs], "n_samples_per_prompt": n, "micro_batch_size": m,
   "groups": [{"prompt": templated prompt, "label": CODA GRPO label, "replies": [n sampled replies]}]}
and writes one JSON line on stdout, {"runs": [...]}: per run what OpenRLHF made of the answers, or
{"error": "Type: message"} with the exception OpenRLHF raised. Runs share one interpreter (OpenRLHF
and torch are imported once).

OpenRLHF's code that runs, as the trainer runs it: SamplesGenerator.generate_samples (prompt
dispatch, samples_generator.py), RolloutRayActor.generate_responses and generate (vllm_engine.py),
SingleTurnAgentExecutor (utils/agent.py: tokenization, the query decoded from prompt + response
token ids, its remote-reward HTTP client and rotation over the URLs), _process_response_into_experience
(the reward, score and extra_logs tensors), RemoteExperienceMaker.make_experience_batch (micro
batches, KL, compute_advantages_and_returns with group_norm), NaiveReplayBuffer.append
(split_experience_batch) and make_experience_batch (the training micro batches), and
BasePPOTrainer._compute_rollout_stats (the rollout/* entries of the log line).

Stand-ins (modules put in sys.modules before OpenRLHF is imported), each because it cannot run here:
- vllm: GPU inference engine (CUDA kernels). Stands in: SamplingParams (a plain record of the sampling
  options), TokensPrompt, random_uuid, and AsyncLLMEngine's generate, which "samples" the scripted
  reply the spec gives for the prompt, tokenized by the same tokenizer, ending in <|im_end|>.
- ray: the distributed runtime whose actors live on GPU nodes. ray.remote leaves classes as they are,
  ray.get/put are identity, ray.wait takes refs in order; an engine handle runs the real
  RolloutRayActor's generate_responses in place of its .remote() call. The actor model group (Ray
  actors holding DeepSpeed policy models) answers make_experience's forward with log-probs 0: the
  policy of a first step equals the reference, which is what the KL-as-loss configuration
  (--algo.kl.use_loss) makes of it anyway (kl is zero in the experience).
- deepspeed: GPU training engine, imported at module level by openrlhf.models and
  openrlhf.utils.deepspeed; nothing of it is called on this path.
- flash_attn: CUDA attention kernels, imported at module level by openrlhf.models.ring_attn_utils
  (through openrlhf.models, which experience_maker imports for compute_reward); nothing of it is called.
The tokenizer is a real transformers PreTrainedTokenizerFast built here (byte-level, no merges, with
Qwen2-VL's special tokens): it round-trips every text, so the query OpenRLHF decodes is the prompt
followed by the reply as Qwen's tokenizer would decode them (image pads one per image: no image
processor runs, as for a text-only tokenizer).
"""

import asyncio
import importlib.abc
import importlib.machinery
import json
import sys
import types
from types import SimpleNamespace as NS

STAND_INS = ("vllm", "ray", "deepspeed", "flash_attn")


def _placeholder(qualname):
    """A class for any name of a stood-in module that OpenRLHF only imports (never calls here)."""
    return type(qualname.rsplit(".", 1)[-1], (), {"__module__": qualname.rsplit(".", 1)[0], "__init__": lambda self, *a, **k: None})


class _StandIn(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in STAND_INS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _StandIn(spec.name)

    def exec_module(self, module):
        module.__version__ = "0.0.0+coda-stand-in"
        module.__path__ = []


# transformers decides at import which optional packages exist (importlib.util.find_spec): the parts of
# it OpenRLHF imports are imported before the stand-ins exist, so it sees the machine as it is.
import peft  # noqa: E402,F401
import transformers.modeling_utils  # noqa: E402,F401
from transformers.integrations.deepspeed import HfDeepSpeedConfig  # noqa: E402,F401

sys.meta_path.insert(0, _StandInFinder())

import vllm  # noqa: E402  (the stand-in)
import vllm.inputs  # noqa: E402
import vllm.utils  # noqa: E402
import ray  # noqa: E402  (the stand-in)

vllm.__version__ = "0.11.0"


class SamplingParams:
    def __init__(self, **kwargs):
        self.__dict__.update({"max_tokens": None, "logprobs": None}, **kwargs)


vllm.SamplingParams = SamplingParams
vllm.inputs.TokensPrompt = lambda **kwargs: dict(kwargs)
vllm.utils.random_uuid = lambda: "coda-probe"
ray.remote = lambda *args, **kwargs: args[0] if len(args) == 1 and callable(args[0]) and not kwargs else (lambda cls: cls)
ray.get = lambda ref, **kwargs: ref
ray.put = lambda value: value
ray.wait = lambda refs, num_returns=1, timeout=None: (refs[:num_returns], refs[num_returns:])

import torch  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

from openrlhf.trainer.ppo_utils.experience import make_experience_batch  # noqa: E402
from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker  # noqa: E402
from openrlhf.trainer.ppo_utils.kl_controller import FixedKLController  # noqa: E402
from openrlhf.trainer.ppo_utils.replay_buffer import NaiveReplayBuffer  # noqa: E402
from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator  # noqa: E402
from openrlhf.trainer.ray.vllm_engine import RolloutRayActor  # noqa: E402
from openrlhf.utils.agent import SingleTurnAgentExecutor  # noqa: E402

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]


def byte_level_tokenizer():
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tokenizer = Tokenizer(models.BPE(vocab={symbol: i for i, symbol in enumerate(sorted(alphabet))}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<|endoftext|>", eos_token="<|im_end|>", clean_up_tokenization_spaces=False)


class ScriptedEngine:
    """The vllm.AsyncLLMEngine stand-in: each prompt's scripted replies, in order."""

    def __init__(self, tokenizer, replies):
        self.tokenizer = tokenizer
        self.replies = {key: list(values) for key, values in replies.items()}

    async def generate(self, prompt, sampling_params, request_id=None):
        text = self.tokenizer.decode(prompt["prompt_token_ids"], skip_special_tokens=False)
        reply = self.replies[text].pop(0)
        ids = self.tokenizer(reply + "<|im_end|>", add_special_tokens=False)["input_ids"]
        yield NS(outputs=[NS(token_ids=ids, text=reply, finish_reason="stop", logprobs=None)])


class EngineHandle:
    """A Ray actor handle stand-in: method.remote(...) runs the real RolloutRayActor method here."""

    def __init__(self, actor):
        self.generate_responses = NS(remote=lambda **kwargs: asyncio.run(actor.generate_responses(**kwargs)))
        self.get_num_unfinished_requests = NS(remote=lambda: 0)


class ActorGroup:
    """The actor model group stand-in (Ray actors holding DeepSpeed policies): log-probs 0 for every action token."""

    def async_run_method_batch(self, method_name, **kwargs):
        assert method_name == "forward", method_name
        return [[torch.zeros(mask.shape, dtype=torch.float32) for mask in kwargs["action_mask"]]]


def trainer_args(spec):
    """train_ppo_ray.py's arguments as temporal.yaml's GRPO template sets them (defaults elsewhere)."""
    return NS(
        rollout=NS(batch_size=len(spec["groups"]), n_samples_per_prompt=spec["n_samples_per_prompt"], micro_batch_size=spec["micro_batch_size"], vllm_generate_batch_size=None, max_tokens_per_gpu=None),
        vllm=NS(enable_sleep=False),
        algo=NS(
            dynamic_filtering_enable=False,
            dynamic_filtering_range=(0, 1),
            advantage=NS(estimator="group_norm", gamma=1.0, lambd=1.0, no_std_norm=False, is_correction_level="off"),
            kl=NS(use_loss=True, estimator="k3"),
        ),
        reward=NS(clip_range=(-10, 10), overlong_buffer_len=None, overlong_penalty_factor=1, stop_properly_penalty_coef=None),
        train=NS(dynamic_batch_enable=False, colocate_all=False, colocate_actor_ref=False, colocate_critic_reward=False),
        actor=NS(num_nodes=1, num_gpus_per_node=1),
        ds=NS(ring_attn_size=1, tensor_parallel_size=1),
        data=NS(max_len=spec.get("max_len", 16384)),
    )


def tensor_summary(value):
    return {"dtype": str(value.dtype).replace("torch.", ""), "values": value.flatten().tolist()}


def run(spec):
    tokenizer = byte_level_tokenizer()
    for group in spec["groups"]:
        for text in [group["prompt"], *group["replies"]]:
            assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"], skip_special_tokens=False) == text, "the probe's tokenizer must round-trip"
    args = trainer_args(spec)
    strategy = NS(args=args)

    # One vLLM engine: its executor keeps one rotation over the reward URLs, as RolloutRayActor.__init__ makes it.
    actor = RolloutRayActor.__new__(RolloutRayActor)
    actor.executor = SingleTurnAgentExecutor(list(spec["urls"]))  # train_ppo_ray.py splits --reward.remote_url at commas
    actor._mm_pad_token_ids = None
    actor.llm = ScriptedEngine(tokenizer, {g["prompt"]: g["replies"] for g in spec["groups"]})

    batches = [(None, [g["prompt"]], [g["label"]], [None]) for g in spec["groups"]]
    generator = SamplesGenerator(strategy, batches, None, tokenizer, [EngineHandle(actor)])
    generate_kwargs = {"max_len": args.data.max_len, "n_samples_per_prompt": args.rollout.n_samples_per_prompt, "temperature": 1.0}
    rollout_samples, _, _, _ = generator.generate_samples(**generate_kwargs)
    built = [
        {"rewards": tensor_summary(s.rewards) if s.rewards is not None else None, "scores": tensor_summary(s.scores) if s.scores is not None else None, "info": {k: tensor_summary(v) for k, v in s.info.items()}}
        for s in rollout_samples
    ]

    maker = RemoteExperienceMaker(ActorGroup(), None, None, None, FixedKLController(0.001), strategy, tokenizer)
    experiences = maker.make_experience_batch(rollout_samples)

    buffer = NaiveReplayBuffer.__new__(NaiveReplayBuffer)  # its __init__ asks CUDA for the current device
    buffer.cpu_offload, buffer.limit, buffer.items = True, 0, []
    for experience in experiences:
        buffer.append(experience)
    train_batches = [make_experience_batch(buffer.items[i : i + 1]) for i in range(len(buffer.items))]

    from openrlhf.trainer.ppo_trainer import BasePPOTrainer

    stats = BasePPOTrainer._compute_rollout_stats(None, experiences)
    return {
        "samples": built,
        "microBatches": [
            {
                "size": len(e.sequences),
                "rewards": tensor_summary(e.rewards),
                "advantages": [float(a[m.bool()][0]) if m.any() else None for a, m in zip(e.advantages, e.action_mask)],
                "info": {k: tensor_summary(v) for k, v in e.info.items() if isinstance(v, torch.Tensor)},
            }
            for e in experiences
        ],
        "replayBuffer": {"items": len(buffer.items), "trainBatches": len(train_batches), "infoNames": sorted(buffer.items[0].info) if buffer.items else []},
        "rolloutStats": stats,
    }


def run_or_error(spec):
    try:
        return run(spec)
    except Exception as error:  # what OpenRLHF raised, for the test to read
        return {"error": f"{type(error).__name__}: {error}"}


def main():
    runs = json.load(sys.stdin)["runs"]
    print(json.dumps({"runs": [run_or_error(spec) for spec in runs]}))


if __name__ == "__main__":
    main()
