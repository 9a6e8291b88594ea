"""Qwen2-VL's 3D positions when LLaMA-Factory 0.9.5's Hugging Face engine generates, with transformers 5.

Since transformers 5 (its "Unify 3D position ids" change), Qwen2.5-VL computes the multimodal RoPE
positions of a prompt from `mm_token_type_ids` (0 text, 1 image, 2 video), which its processor
returns beside `input_ids`; a generate() call without it silently gives every token a 1D position.
LLaMA-Factory 0.9.5 trains with the 3D positions (its collator builds the types from the image and
video tokens), but its Hugging Face engine (ChatModel, `llamafactory-cli api` and `chat`) passes
generate() only what its Qwen2-VL plugin's get_mm_inputs returns, which has no types: a model it
trained is served positions it never saw after the first image. Measured on the small planner
(bench/small-planner.ts, seed 0, 30 epochs): after SFT it wrote 5 of the 36 reference replies
through the engine as installed, and all 36 with the types added here.

install() makes the plugin return the types of the batch's token ids, as the collator builds them,
so the engine's generate() gets them; the collator pads such lists (it does so for Gemma 3).
"""

from llamafactory.data.mm_plugin import Qwen2VLPlugin

_original = Qwen2VLPlugin.get_mm_inputs


def _with_token_types(self, images, videos, audios, imglens, vidlens, audlens, batch_ids, processor):
    inputs = _original(self, images, videos, audios, imglens, vidlens, audlens, batch_ids, processor)
    kinds = {getattr(processor, "image_token_id", None): 1, getattr(processor, "video_token_id", None): 2}
    kinds.pop(None, None)
    inputs["mm_token_type_ids"] = [[kinds.get(token, 0) for token in ids] for ids in batch_ids]
    return inputs


def install() -> None:
    Qwen2VLPlugin.get_mm_inputs = _with_token_types
