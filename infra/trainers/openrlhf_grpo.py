"""OpenRLHF 0.11.2's GRPO trainer with the reward service's token from the environment (reward_token.py).

    python3 openrlhf_grpo.py <the flags of python -m openrlhf.cli.train_ppo_ray>

training.grpo's program for OpenRLHF (temporal.yaml). The GPU worker's command line names the reward
service without credentials (--reward.remote_url URL[,URL...]) and its environment holds the token
(CODA_REWARD_TOKEN). This launcher takes the token out of its environment (so the Ray processes it
starts do not inherit it), puts it into each URL as the password, and runs
openrlhf.cli.train_ppo_ray in this same process on that argument list: sys.argv changes, the command
line the kernel shows every user (/proc/<pid>/cmdline, ps) stays the worker's. A URL that already
carries credentials is refused (exit 2, as argparse refuses a command line).

From there the URLs travel as OpenRLHF passes them: create_vllm_engines(remote_rm_url=...) gives them
to each vLLM engine's Ray actor as a constructor argument, which Ray sends to the engine's node over
its own connections (never a command line, a runtime environment or a file), and each engine's
SingleTurnAgentExecutor posts with aiohttp, which sends the URL's credentials as HTTP Basic.
"""

import os
import runpy
import sys

from reward_token import TOKEN_ENV, reward_token, with_token

FLAG = "--reward.remote_url"


def completed_args(argv, token):
    """The command line with the token put into --reward.remote_url's URLs (both `FLAG URL` and `FLAG=URL`)."""
    args = list(argv)
    for i, arg in enumerate(args):
        if arg == FLAG and i + 1 < len(args):
            args[i + 1] = with_token(args[i + 1], token, FLAG)
        elif arg.startswith(FLAG + "="):
            args[i] = f"{FLAG}={with_token(arg[len(FLAG) + 1:], token, FLAG)}"
    return args


def main():
    token = reward_token()
    os.environ.pop(TOKEN_ENV, None)
    try:
        args = completed_args(sys.argv[1:], token)
    except SystemExit as refusal:
        print(f"usage: train_ppo_ray.py [-h] [options]\ntrain_ppo_ray.py: error: {refusal}", file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], *args]
    runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
