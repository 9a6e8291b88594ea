"""CODA's specialization GRPO with TRL's GRPOTrainer: the second backend of training.grpo (docs/real-trainers.md).

    trl_grpo.py --model M --prompts P.jsonl --reward-url URL --checkpoints DIR --output DIR [options]

The GPU worker runs it as it runs OpenRLHF (activities/training/trainer-inputs.ts fills the
placeholders of training.grpo.args), so it keeps OpenRLHF's side of the contract:
- it trains on the prompt JSONL the worker writes for OpenRLHF (prompt: chat messages whose content
  is a list of parts, images: absolute paths, label: the CODA GRPO label), converted to TRL's shape
  in one place (grpo_dataset);
- every sampled completion's reward comes from the worker's reward service, one sample per POST as
  each vLLM engine of OpenRLHF 0.11.2 sends it: `query` the decoding of prompt and completion token
  ids with the special tokens kept (image placeholders expanded), `prompts` the chat-templated prompt
  (one <|image_pad|> per image), `labels` the label (core/remote-reward.ts); the URL comes without
  credentials and the token from CODA_REWARD_TOKEN (reward_token.py: never on the command line,
  which every local user reads). An answer that is not
  the protocol, or an HTTP error other than the service being busy, stops training at once;
- only a LoRA on the language model's projections trains (the vision tower stays frozen, as
  OpenRLHF's --actor.freeze_visual_encoder keeps it); the executor is another model, never loaded;
- checkpoints go to --checkpoints as transformers' Trainer writes them (checkpoint-N/, complete once
  its trainer_state.json exists) and a rerun resumes from the newest complete one; the final adapter
  goes to --output;
- progress is printed as OpenRLHF prints it, `Global step N: {...}` (core/trainer-progress.ts).
TRL 0.29.1 is installed beside LLaMA-Factory by infra/install-trainers.sh (put first on PYTHONPATH).
"""

import argparse
import base64
import concurrent.futures
import hashlib
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402
import torch  # noqa: E402
from peft import LoraConfig  # noqa: E402
from PIL import Image  # noqa: E402
from transformers import AutoModelForImageTextToText, AutoProcessor, BatchFeature, TrainerCallback, set_seed  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from reward_token import USER as TOKEN_USER, check_no_credentials, reward_token  # noqa: E402

# The language model's projections (Qwen2.5-VL: model.language_model.layers.N...); the vision
# tower's blocks have gate/up/down projections too, which must not train.
LANGUAGE_LORA_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# The vision tokens a reply must never hold: a completion with an image or video placeholder makes
# the model's forward over prompt and completion count more placeholders than images, and TRL's
# loss step fails ("Image features and image tokens do not match"). A small planner sampled at
# temperature 1 wrote one after a few epochs (docs/real-trainers.md).
VISION_TOKENS = ("<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="trl_grpo.py", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="the planner's weights (a folder or an HF id)")
    p.add_argument("--prompts", required=True, help="the prompt JSONL the GPU worker wrote")
    p.add_argument("--reward-url", required=True, help="the reward service's POST URL, without credentials (the token comes from CODA_REWARD_TOKEN)")
    p.add_argument("--checkpoints", required=True, help="resumable checkpoints: checkpoint-N/")
    p.add_argument("--output", required=True, help="the final LoRA adapter")
    p.add_argument("--max-images", type=int, default=0, help="refuse a prompt with more images (0: no limit)")
    p.add_argument("--seed", type=int, default=42, help="seeds sampling, LoRA init and data order (the run seed: ${CODA_SEED:-1} in temporal.yaml)")
    p.add_argument("--num-generations", type=int, default=8, help="samples per prompt (the GRPO group)")
    p.add_argument("--prompts-per-step", type=int, default=2, help="prompts per optimizer step")
    p.add_argument("--max-completion-length", type=int, default=512)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--learning-rate", type=float, default=1e-5)
    p.add_argument("--lr-scheduler", default="linear", help="transformers' lr_scheduler_type (linear: down to 0 at the last step)")
    p.add_argument("--beta", type=float, default=0.001, help="KL coefficient (0: no reference model, no forward pass through it)")
    p.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=True,
                   help="recompute activations in the backward pass (TRL's default, for memory on a GPU; a tiny model on the CPU only pays the recompute)")
    p.add_argument("--lora-rank", type=int, default=64)
    p.add_argument("--lora-alpha", type=int, default=128)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (-1: the epochs decide)")
    p.add_argument("--save-steps", type=int, default=5)
    p.add_argument("--save-total-limit", type=int, default=3)
    p.add_argument("--reward-workers", type=int, default=8, help="reward requests in flight")
    p.add_argument("--cpu", action="store_true", help="train on the CPU in float32 (no GPU node)")
    return p.parse_args(argv)


def grpo_dataset(prompts_file, max_images):
    """The worker's OpenRLHF prompt rows in TRL's shape: conversational `prompt`, `images` opened lazily, `label` as it is."""
    rows = []
    with open(prompts_file, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            row = json.loads(line)
            images = row["images"]
            if max_images and len(images) > max_images:
                sys.exit(f"{prompts_file} row {i}: {len(images)} images, more than --max-images {max_images}")
            messages = [{"role": m["role"], "content": [part_of(p) for p in m["content"]]} for m in row["prompt"]]
            rows.append({"prompt": messages, "images": images, "label": row["label"]})
    if not rows:
        sys.exit(f"{prompts_file}: no rows")
    return datasets.Dataset.from_list(rows).cast_column("images", datasets.List(datasets.Image()))


def part_of(part):
    """A content part with both keys (Arrow gives every part one struct type)."""
    return {"type": part["type"], "text": part.get("text") if part["type"] == "text" else None}


class RewardClient:
    """Posts one sample per request, as OpenRLHF 0.11.2's engines do; retries only what may pass on a retry.

    The URL comes from the command line without credentials; the token, from the environment
    (reward_token.py), goes as HTTP Basic's password, as OpenRLHF's aiohttp client sends it."""

    def __init__(self, url, token, tries=5, pause=1.0, timeout=180):
        check_no_credentials(url, "--reward-url")
        self.url = url
        self.headers = {"content-type": "application/json"}
        if token is not None:
            self.headers["authorization"] = "Basic " + base64.b64encode(f"{TOKEN_USER}:{token}".encode()).decode()
        self.tries, self.pause, self.timeout = tries, pause, timeout

    def reward(self, query, prompt, label):
        body = json.dumps({"query": [query], "prompts": [prompt], "labels": [label]}).encode()
        last = ""
        for _ in range(self.tries):
            request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return self.answer(json.loads(response.read()))
            except urllib.error.HTTPError as err:
                last = f"{err.code} {err.read().decode(errors='replace')}"
                if err.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                last = str(err)
            time.sleep(self.pause)
        raise RuntimeError(f"reward service {self.url}: {last}")

    def answer(self, body):
        rewards = body.get("rewards") if isinstance(body, dict) else None
        if not isinstance(rewards, list) or len(rewards) != 1 or not isinstance(rewards[0], (int, float)):
            raise RuntimeError(f"reward service {self.url}: no reward for the sample in {json.dumps(body)[:500]}")
        return float(rewards[0])


def remote_reward(processor, client, workers):
    """TRL's reward function: each completion scored by the reward service with what OpenRLHF would send."""
    tokenizer = processor.tokenizer
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)

    def remote_reward(prompts, completion_ids, label, images, **_):
        expanded = {}
        requests = []
        for messages, ids, lab, imgs in zip(prompts, completion_ids, label, images):
            templated = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            if templated not in expanded:
                expanded[templated] = processor(text=[templated], images=imgs or None)["input_ids"][0]
            query = tokenizer.decode(expanded[templated] + list(ids), skip_special_tokens=False)
            requests.append((query, templated, lab))
        return list(pool.map(lambda r: client.reward(*r), requests))

    return remote_reward


class GlobalStepLog(TrainerCallback):
    """Prints each logged step as OpenRLHF does (`Global step N: {...}`), the end-of-training summary left out."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or "train_runtime" in logs:
            return
        figures = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        print(f"Global step {state.global_step}: {figures!r}", flush=True)


def flat_images(images):
    """The images of a possibly nested list, in order."""
    if isinstance(images, (list, tuple)):
        return [image for item in images for image in flat_images(item)]
    return [images]


def cache_image_processing(processor):
    """Keeps the image processor's answer for each image: every step processes its prompts' screenshots
    again (TRL to sample, the reward function to expand the placeholders), and every epoch the same ones.

    The answer for several images is the concatenation of each one's (Qwen2-VL's processor treats them
    one by one), so the pixel values are the same floats as without the cache. The processor keeps its
    class name (a checkpoint's preprocessor config names it); the cache lives outside the instance."""
    inner = processor.image_processor
    base = type(inner)
    cache = {}

    def call(self, images=None, **kwargs):
        flat = flat_images(images) if images is not None else []
        if not flat or not all(isinstance(i, Image.Image) for i in flat):
            return base.__call__(self, images, **kwargs)
        options = repr(sorted(kwargs.items()))
        answers = []
        for image in flat:
            key = (hashlib.blake2b(image.tobytes(), digest_size=16).digest(), image.size, image.mode, options)
            if key not in cache:
                cache[key] = base.__call__(self, [image], **kwargs)
            answers.append(cache[key])
        if not all(isinstance(a[k], torch.Tensor) for a in answers for k in a.keys()):
            return base.__call__(self, images, **kwargs)
        return BatchFeature({k: torch.cat([a[k] for a in answers]) for k in answers[0].keys()})

    inner.__class__ = type(base.__name__, (base,), {"__call__": call, "__module__": base.__module__})


def vision_token_ids(tokenizer):
    """The ids of VISION_TOKENS in this tokenizer (those it has)."""
    ids = [tokenizer.convert_tokens_to_ids(t) for t in VISION_TOKENS]
    return sorted({i for i in ids if isinstance(i, int) and i != tokenizer.unk_token_id})


def newest_checkpoint(root):
    """The newest complete checkpoint-N of a run (trainer_state.json is written last), or None."""
    if not os.path.isdir(root):
        return None
    steps = [int(m.group(1)) for m in map(CHECKPOINT.match, os.listdir(root)) if m and os.path.exists(os.path.join(root, m.group(0), "trainer_state.json"))]
    return os.path.join(root, f"checkpoint-{max(steps)}") if steps else None


def main(argv):
    a = parse_args(argv)
    # Before the model loads: a URL with credentials fails the job at once.
    rewards = RewardClient(a.reward_url, reward_token())
    processor = AutoProcessor.from_pretrained(a.model, padding_side="left")
    cache_image_processing(processor)
    dtype = torch.float32 if a.cpu else torch.bfloat16
    model = AutoModelForImageTextToText.from_pretrained(a.model, dtype=dtype)
    config = GRPOConfig(
        output_dir=a.checkpoints,
        use_cpu=a.cpu,
        bf16=not a.cpu,
        seed=a.seed,
        num_generations=a.num_generations,
        per_device_train_batch_size=a.prompts_per_step * a.num_generations,
        gradient_accumulation_steps=1,
        gradient_checkpointing=a.gradient_checkpointing,
        max_completion_length=a.max_completion_length,
        temperature=a.temperature,
        learning_rate=a.learning_rate,
        lr_scheduler_type=a.lr_scheduler,
        beta=a.beta,
        num_train_epochs=a.epochs,
        max_steps=a.max_steps,
        save_strategy="steps",
        save_steps=a.save_steps,
        save_total_limit=a.save_total_limit,
        logging_steps=1,
        report_to=[],
        disable_tqdm=True,
        generation_kwargs={"suppress_tokens": vision_token_ids(processor.tokenizer)},
    )
    lora = LoraConfig(r=a.lora_rank, lora_alpha=a.lora_alpha, target_modules=LANGUAGE_LORA_TARGETS, task_type="CAUSAL_LM")
    # GRPOTrainer makes the LoRA before it seeds anything (it seeds sampling, and Trainer the data order, later).
    set_seed(a.seed)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=remote_reward(processor, rewards, a.reward_workers),
        args=config,
        train_dataset=grpo_dataset(a.prompts, a.max_images),
        processing_class=processor,
        peft_config=lora,
        callbacks=[GlobalStepLog()],
    )
    print(f"seed {trainer.args.seed}: the LoRA's initial weights, the data order and the sampling", flush=True)
    resume = newest_checkpoint(a.checkpoints)
    if resume is not None:
        print(f"resuming from {resume}", flush=True)
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(a.output)
    processor.save_pretrained(a.output)
    print(f"Saved the final LoRA adapter to {a.output}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
