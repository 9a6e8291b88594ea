"""The ground truth for SFT rows' text, from the real LLaMA-Factory and transformers (real-llamafactory.test.ts).

Reads JSON on stdin: {"model", "mediaDir", "imageMaxPixels", "rows": [{"row": {messages, images}, "served": [chat
messages as the gateway sends them], "reply"}]}. Prints a JSON list, one {"llamafactory", "served"} per row:
the text LLaMA-Factory 0.9.5 trains on for the row (its qwen2_vl template, its Qwen2-VL plugin expanding each
<image> for the image as it loads it), and the text the model is served (the processor's chat template on the
served messages, its image pads expanded by the processor for the same images, the reply and its end of turn).
"""

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from PIL import Image  # noqa: E402
from transformers import AutoProcessor, AutoTokenizer  # noqa: E402
from llamafactory.data import get_template_and_fix_tokenizer  # noqa: E402
from llamafactory.hparams import DataArguments  # noqa: E402


def main() -> None:
    given = json.load(sys.stdin)
    tokenizer = AutoTokenizer.from_pretrained(given["model"])
    processor = AutoProcessor.from_pretrained(given["model"])
    # What LLaMA-Factory's model loader sets on the processor (model/patcher.py), from the YAML.
    processor.tokenizer = tokenizer
    processor.image_max_pixels = given["imageMaxPixels"]
    processor.image_min_pixels = 32 * 32
    processor.image_do_pan_and_scan = False
    processor.crop_to_patches = False
    template = get_template_and_fix_tokenizer(tokenizer, DataArguments(template="qwen2_vl"))

    print(json.dumps([render(item, given["mediaDir"], tokenizer, processor, template) for item in given["rows"]]))


def render(item, media_dir, tokenizer, processor, template) -> dict:
    messages = item["row"]["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else None
    turns = messages[1:] if system is not None else messages
    images = [os.path.join(media_dir, path) for path in item["row"]["images"]]
    turns = template.mm_plugin.process_messages(turns, images, [], [], processor)
    ids = [i for source, target in template.encode_multiturn(tokenizer, turns, system) for i in source + target]
    trained = tokenizer.decode(ids, skip_special_tokens=False)

    prompt = processor.apply_chat_template(item["served"], tokenize=False, add_generation_prompt=True)
    text = prompt + item["reply"] + "<|im_end|>\n"
    encoded = processor(text=[text], images=[Image.open(path).convert("RGB") for path in images])
    served = tokenizer.decode(encoded["input_ids"][0], skip_special_tokens=False)
    return {"llamafactory": trained, "served": served}

if __name__ == "__main__":
    main()
