"""A tiny Qwen2.5-VL for the real-trainer tests, and the small planner, made here with nothing downloaded.

    tiny_qwen2_5_vl.py <output dir>
    tiny_qwen2_5_vl.py <output dir> --size small --corpus <corpus.json> [--max-pixels N] [--seed N]

Writes a model folder LLaMA-Factory and transformers load as they load Qwen/Qwen2.5-VL-*-Instruct:
- the model: Qwen2_5_VLForConditionalGeneration from a config with the real architecture (vision
  tower with windowed attention, patch merger, multimodal RoPE) and tiny sizes, random weights
  (seeded), save_pretrained;
- the tokenizer: a byte-level BPE trained here with the `tokenizers` library on text like the
  planner's prompts, carrying Qwen's special tokens (<|endoftext|>, <|im_start|>, <|im_end|>,
  <|vision_start|>, <|vision_end|>, <|image_pad|>, <|video_pad|>) and Qwen2-VL's chat template;
- the processor: Qwen2-VL's image-processor values (14-pixel patches, 2x2 merge, CLIP mean and std,
  min/max pixels as Qwen ships them).
The default size (91k parameters) is for the tests that check that training runs, resumes and
hands over its adapter, not what the model learns. `--size small` is the small planner (issue 32):
large enough to learn the local tasks' thoughts by SFT on this CPU in minutes, its tokenizer trained
on `--corpus`, a JSON list of the planner's texts that infra/small-planner.ts writes from the
project's own prompt code and task files, and its processor's max_pixels the planner's box.
"""

import argparse
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
import torch  # noqa: E402
from transformers import (  # noqa: E402
    PreTrainedTokenizerFast,
    Qwen2_5_VLConfig,
    Qwen2_5_VLForConditionalGeneration,
    Qwen2_5_VLProcessor,
    Qwen2VLImageProcessor,
)
from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor  # noqa: E402

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# Qwen2-VL's chat template (chat_template.json of Qwen/Qwen2-VL-*-Instruct and Qwen2.5-VL): a default
# system turn, each message as <|im_start|>role\n...<|im_end|>\n, content parts joined with nothing.
CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Text like what the planner reads and writes, for the default size's BPE merges (any text would do there).
CORPUS = [
    "You operate a desktop application for a user. Each turn you see the task, what was done so far and the current screen.",
    "Thought: the Console tab is open; click the input field at the bottom and type the expression.",
    "Action: Click the input field at the bottom of the Console tab",
    "Task (in KAlgebra): Plot the function y = x^2 and tell me the value at x = 3.",
    "Screen now, before step 2: What is the next step? Screen before step 1:",
    "Earlier steps (their screenshots are no longer shown): Step 1 DONE FAIL ANS 5",
] * 20

# The language model's sizes. mrope_section splits half a head's dimension over time, height and
# width as Qwen2.5-VL does (16, 24, 24 of 64). The vision tower stays the tiny one: SFT freezes it
# (training.sft freeze_vision_tower), so only its merger's output size follows the text model's.
# `init` is the weights' standard deviation: transformers' 0.02 suits hidden sizes in the
# thousands; at 64 the tied embeddings' rows are 0.16 long and the final norm's output 8, so no
# logit leaves +-1.3, and a LoRA, which trains neither, stayed at a loss of 5.8 (uniform: 6.9) over
# 30 epochs. The small planner takes 1/sqrt(hidden). The small size: two layers (one to find the task's instruction in the prompt, one
# to write its reply), a vocabulary that spells the planner's words and the plans' expressions in
# few tokens, and learns the local tasks' 36 replies in 30 epochs (docs/benchmarks.md).
SIZES = {
    "tiny": dict(vocab=400, hidden=32, intermediate=64, layers=1, heads=2, kv_heads=1, mrope=[2, 3, 3], init=0.02),
    "small": dict(vocab=1024, hidden=64, intermediate=256, layers=2, heads=2, kv_heads=1, mrope=[4, 6, 6], init=0.125),
}


def build_tokenizer(corpus: list[str], vocab: int) -> PreTrainedTokenizerFast:
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        model_max_length=32768,
        padding_side="right",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_model(tokenizer: PreTrainedTokenizerFast, size: dict, seed: int) -> Qwen2_5_VLForConditionalGeneration:
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    config = Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=size["hidden"],
            intermediate_size=size["intermediate"],
            num_hidden_layers=size["layers"],
            num_attention_heads=size["heads"],
            num_key_value_heads=size["kv_heads"],
            max_position_embeddings=32768,
            rope_scaling={"type": "mrope", "mrope_section": size["mrope"]},
            rope_theta=1000000.0,
            tie_word_embeddings=True,
            initializer_range=size["init"],
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids["<|im_end|>"],
        ),
        vision_config=dict(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=size["hidden"],
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            window_size=112,
            fullatt_block_indexes=[0],
            in_chans=3,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return Qwen2_5_VLForConditionalGeneration(config)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Build a Qwen2.5-VL with random weights (seeded) and a tokenizer trained here.")
    parser.add_argument("out", help="the model folder to write")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--corpus", help="a JSON list of texts to train the tokenizer on (required with --size small)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the random weights")
    # Qwen's own default (1280 image tokens) unless told: the small planner's is its box's pixels.
    parser.add_argument("--max-pixels", type=int, default=28 * 28 * 1280)
    args = parser.parse_args()
    if args.size != "tiny" and args.corpus is None:
        parser.error(f"--size {args.size} needs --corpus: its tokenizer must learn the planner's own text")
    return args


def main() -> None:
    args = arguments()
    size = SIZES[args.size]
    corpus = CORPUS
    if args.corpus is not None:
        with open(args.corpus, encoding="utf-8") as f:
            corpus = json.load(f)
    tokenizer = build_tokenizer(corpus, size["vocab"])
    model = build_model(tokenizer, size, args.seed)
    model.save_pretrained(args.out)
    image_processor = Qwen2VLImageProcessor(
        min_pixels=56 * 56,
        max_pixels=args.max_pixels,
        patch_size=14,
        temporal_patch_size=2,
        merge_size=2,
        image_mean=[0.48145466, 0.4578275, 0.40821073],
        image_std=[0.26862954, 0.26130258, 0.27577711],
    )
    video_processor = Qwen2VLVideoProcessor(patch_size=14, temporal_patch_size=2, merge_size=2)
    processor = Qwen2_5_VLProcessor(image_processor=image_processor, tokenizer=tokenizer, video_processor=video_processor, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{args.size} Qwen2.5-VL in {args.out}: {parameters} parameters, vocabulary {len(tokenizer)}")


if __name__ == "__main__":
    main()
