"""The planner's greedy reply to each SFT row's prompt, as LLaMA-Factory's server would answer it.

    greedy_replies.py --model DIR [--adapter DIR] --dataset DIR --image-max-pixels N --out FILE

Reads the dataset's data.json (the ShareGPT rows the pipeline writes, infra/small-planner.ts) and, for
each row, asks LLaMA-Factory 0.9.5's ChatModel with its Hugging Face engine (what `llamafactory-cli
api` serves with; the adapter merged at load as there) for the reply to the row's messages without
its last assistant turn, the row's system message as the system, its images from the dataset's
folder, greedy (do_sample false), Qwen2-VL's 3D positions restored (llamafactory_mrope.py). Writes the replies to --out as one JSON list, in the rows' order
(stdout carries LLaMA-Factory's log). A reply stops one token after the longest row's reply: a longer
one cannot be any row's, and an untrained model would otherwise write until the context ends.
"""

import argparse
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from llamafactory.chat import ChatModel  # noqa: E402
import llamafactory_mrope  # noqa: E402


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--adapter")
    parser.add_argument("--dataset", required=True, help="the folder with data.json and the images it names")
    parser.add_argument("--image-max-pixels", type=int, required=True, help="the planner's box in pixels, as in training")
    parser.add_argument("--out", required=True, help="the JSON file to write the replies to")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    llamafactory_mrope.install()
    settings = {
        "model_name_or_path": args.model,
        "template": "qwen2_vl",
        "infer_backend": "huggingface",
        "infer_dtype": "float32",
        "image_max_pixels": args.image_max_pixels,
        "do_sample": False,
    }
    if args.adapter is not None:
        settings.update(adapter_name_or_path=args.adapter, finetuning_type="lora")
    chat = ChatModel(settings)
    with open(os.path.join(args.dataset, "data.json"), encoding="utf-8") as f:
        rows = json.load(f)
    longest = max(len(chat.engine.tokenizer(row["messages"][-1]["content"])["input_ids"]) for row in rows)
    replies = []
    for row in rows:
        messages = row["messages"][:-1]
        system = messages[0]["content"] if messages[0]["role"] == "system" else None
        turns = messages[1:] if system is not None else messages
        images = [os.path.join(args.dataset, path) for path in row["images"]]
        replies.append(chat.chat(turns, system=system, images=images, max_new_tokens=longest + 1)[0].response_text)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(replies, f)


if __name__ == "__main__":
    main()
