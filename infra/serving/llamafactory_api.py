"""The planner served on CPU by LLaMA-Factory's OpenAI-compatible API server: training.serving's restart command.

    llamafactory_api.py start --model BASE [--adapter DIR | --checkpoint DIR] --name NAME --port PORT --state-dir DIR --api-key-env VAR
                              [--seed N] [--host ADDRESS] [--allow-host NAME ...] [--image-endpoint URL] [--max-n N ...]
    llamafactory_api.py stop --state-dir DIR

`start` (re)starts `llamafactory-cli api` (its Hugging Face backend, template qwen2_vl) on BASE with
the LoRA adapter in DIR merged, serving NAME on PORT, and returns once GET /v1/models lists NAME.
A checkpoint of full weights (training.sft with finetuning_type full: `lora: false`) is served as
BASE itself, `--model {path}` with no --adapter. `--checkpoint {path}` takes either kind, so one
training.serving command serves both (TRL's GRPO adapters and a full-weights SFT): a folder holding
adapter_config.json is merged on BASE, one holding config.json is served instead of BASE.
- the folders are checked first, so a bad restart names the folder and leaves the running server
  alone: the adapter folder must hold adapter_config.json; a --model folder must hold config.json
  (one holding only an adapter is named as such);
- then the server of the previous `start` with the same --state-dir (its pid in server.pid) is
  stopped: SIGTERM to its process group, SIGKILL after --grace seconds; the port is free again;
- the new server runs detached in its own session (it outlives this command), its output appended
  to server.log in the state directory, on the CPU (CUDA_VISIBLE_DEVICES="") with nothing
  downloaded (HF_HUB_OFFLINE=1); if it exits before serving, this command fails with its log's end.
A request's top_p defaults to 1 and top-k is off, as vLLM samples where the request and the model
set nothing (LLaMA-Factory's defaults would cut to the top 70% and the top 50 tokens).
LLaMA-Factory's server merges the adapter at start (switching adapters is a restart) and answers
whatever `model` a request names with the one it serves (/v1/models lists one card,
API_MODEL_NAME); the server started here answers another name with vLLM's 404 instead.
Its request model has no `seed` (a request's seed is dropped) and its engine draws from torch's one
generator, so a server seeded once would give a request whatever draws the requests before it left
(a stranger's included). Each request is seeded instead, from --seed (the run seed, CODA_SEED) and
the request's own `seed`, or the whole request when it has none (planner_guard.request_seed), one
generation at a time (MAX_CONCURRENT=1): the same request gets the same samples, whatever came before.
The server generates with Qwen2.5-VL's 3D positions (infra/trainers/llamafactory_mrope.py), which
LLaMA-Factory's engine drops with transformers 5: without them a planner it trained is served
positions it never saw.
The server always demands a key: --api-key-env NAME names the variable holding it (the planner's
models.planner.apiKeyEnv; the demo generates one per start), at least 16 characters; it reaches the
server through its environment, never its command line. What the server refuses before LLaMA-Factory
sees a request (another Host, any Origin, no key, a body, `n`, image count or image size beyond its
cap, an image from anywhere but a data: URL or --image-endpoint) is planner_guard.py's; GET /health
answers 200 without the key (training.serving.healthUrl).
Run it with the trainers' venv (infra/install-trainers.sh): .tools/trainers/bin/python3.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planner_guard  # noqa: E402 - beside this file

PID_FILE = "server.pid"
LOG_FILE = "server.log"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="llamafactory_api.py", description=__doc__.split("\n")[0])
    commands = p.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="(re)start the server and wait until it serves --name")
    start.add_argument("--model", required=True, help="the base planner's weights, or a full-weights checkpoint ({path}): a folder, or an HF id already cached")
    weights = start.add_mutually_exclusive_group()
    weights.add_argument("--adapter", help="a LoRA adapter folder to merge (a checkpoint's files; {path} of training.serving.command)")
    weights.add_argument("--checkpoint", help="a trained checkpoint of either kind ({path}): an adapter merged on --model, or full weights served instead of it")
    start.add_argument("--name", required=True, help="the model name /v1/models lists ({name})")
    start.add_argument("--port", type=int, required=True)
    start.add_argument("--host", default="127.0.0.1", help="where the server listens (0.0.0.0 for other machines)")
    start.add_argument("--state-dir", required=True, help="holds server.pid and server.log, from one start to the next")
    start.add_argument("--seed", type=int, default=1, help="seeds the server's sampling once, at start (the run seed)")
    start.add_argument("--template", default="qwen2_vl", help="LLaMA-Factory's chat template (the one the SFT trained with)")
    start.add_argument("--timeout", type=float, default=600, help="seconds to wait for the server to serve --name")
    start.add_argument("--grace", type=float, default=30, help="seconds the previous server has to exit after SIGTERM")
    start.add_argument("--api-key-env", required=True, help="the variable holding the key the server always demands (models.planner.apiKeyEnv)")
    start.add_argument("--allow-host", action="append", default=[], help="a name the Host header may give besides the bind address (repeatable)")
    start.add_argument("--image-endpoint", help="the S3 endpoint whose http(s) image URLs the server fetches (storage.presignEndpoint or endpoint); without it, data: URLs only")
    limits = planner_guard.Limits()
    start.add_argument("--max-n", type=int, default=limits.max_n, help="the most samples one request may ask for")
    start.add_argument("--max-body-bytes", type=int, default=limits.max_body_bytes, help="the largest request body read")
    start.add_argument("--max-images", type=int, default=limits.max_images, help="the most images one request may carry")
    start.add_argument("--max-image-pixels", type=int, default=limits.max_image_pixels, help="the most pixels one image may have, by its header")
    stop = commands.add_parser("stop", help="stop the server of this state directory")
    stop.add_argument("--state-dir", required=True)
    stop.add_argument("--grace", type=float, default=30)
    return p.parse_args(argv)


def gone(pid):
    """True once the process has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError):
        return True


def ours(pid):
    """Whether pid is still a server this program started (not a process that took over the number)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except FileNotFoundError:
        return False
    return any(w.endswith(b"llamafactory_api.py") for w in words) and b"serve" in words


def stop(state_dir, grace):
    """Stops the server recorded in state_dir (its whole process group) and waits until it has exited."""
    pid_file = os.path.join(state_dir, PID_FILE)
    try:
        with open(pid_file, encoding="utf-8") as f:
            pid = int(f.read().strip())
    except FileNotFoundError:
        return
    if not gone(pid) and ours(pid):
        signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while not gone(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not gone(pid):
            signal_group(pid, signal.SIGKILL)
            while not gone(pid):
                time.sleep(0.1)
        print(f"stopped the server of {state_dir} (pid {pid})", file=sys.stderr)
    os.remove(pid_file)


def signal_group(pid, number):
    """Signals the server's process group (its session, so every child it made); one that has just exited is left alone."""
    try:
        os.killpg(pid, number)
    except ProcessLookupError:
        pass


def served_names(host, port, key):
    """The ids GET /v1/models lists, or None while the server does not answer."""
    address = "127.0.0.1" if host in planner_guard.WILDCARDS else host
    request = urllib.request.Request(f"http://{f'[{address}]' if ':' in address else address}:{port}/v1/models")
    request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return [card["id"] for card in json.load(response)["data"]]
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, KeyError):
        return None


def log_tail(path, lines=15):
    with open(path, encoding="utf-8", errors="replace") as f:
        return "".join(f.readlines()[-lines:])


def spawn(a, key):
    """The server, detached in its own session, writing to server.log; its Popen."""
    guard = {"hosts": planner_guard.allowed_hosts(a.host, a.allow_host), "image_endpoint": a.image_endpoint,
             "limits": {"max_n": a.max_n, "max_body_bytes": a.max_body_bytes, "max_images": a.max_images, "max_image_pixels": a.max_image_pixels}}
    command = [sys.executable, os.path.abspath(__file__), "serve", str(a.seed), json.dumps({**guard, "hosts": sorted(guard["hosts"])}),
               "--model_name_or_path", a.model, "--template", a.template, "--infer_backend", "huggingface",
               # vLLM's defaults where a request sets none (LLaMA-Factory's own are top_p 0.7 and top_k 50): the
               # model's whole distribution at the request's temperature, as a trainer samples it.
               "--top_p", "1.0", "--top_k", "0"]
    if a.adapter is not None:
        command += ["--adapter_name_or_path", a.adapter]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1", "API_HOST": a.host, "API_PORT": str(a.port),
           "API_MODEL_NAME": a.name,
           # LLaMA-Factory logs every request whole by default: each screenshot's base64 included.
           "API_VERBOSE": "0",
           # One generation at a time: each is seeded on torch's one generator (serve).
           "MAX_CONCURRENT": "1",
           "API_KEY": key}
    with open(os.path.join(a.state_dir, LOG_FILE), "a", encoding="utf-8") as log:
        log.write(f"\n==== {time.strftime('%Y-%m-%dT%H:%M:%S')} start {a.name}: {' '.join(command)}\n")
        log.flush()
        return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def weights_problem(a):
    """Why --adapter or --model cannot be served, or None; a --model that is no path is an HF id, which the server resolves."""
    if a.adapter is not None and not os.path.isfile(os.path.join(a.adapter, "adapter_config.json")):
        what = "does not exist" if not os.path.exists(a.adapter) else "holds no adapter_config.json"
        return f"the adapter folder {a.adapter} {what}"
    if os.path.isdir(a.model) and not os.path.isfile(os.path.join(a.model, "config.json")):
        if os.path.isfile(os.path.join(a.model, "adapter_config.json")):
            return f"the model folder {a.model} holds a LoRA adapter, not full weights: pass it as --adapter on its base --model"
        return f"the model folder {a.model} holds no config.json"
    if a.model.startswith(("/", "./", "../")) and not os.path.exists(a.model):
        return f"the model folder {a.model} does not exist"
    return None


def resolve_checkpoint(a):
    """--checkpoint made into --adapter (a LoRA adapter on --model) or --model (full weights); the reason it is neither, or None."""
    if a.checkpoint is None:
        return None
    if os.path.isfile(os.path.join(a.checkpoint, "adapter_config.json")):
        a.adapter = a.checkpoint
    elif os.path.isfile(os.path.join(a.checkpoint, "config.json")):
        a.model = a.checkpoint
    else:
        what = "does not exist" if not os.path.exists(a.checkpoint) else "holds neither adapter_config.json (an adapter) nor config.json (full weights)"
        return f"the checkpoint folder {a.checkpoint} {what}"
    return None


def start(a):
    problem = resolve_checkpoint(a) or weights_problem(a)
    if problem is not None:
        sys.exit(f"llamafactory_api.py: {problem}: nothing was restarted")
    problem = key_problem(a.api_key_env, os.environ.get(a.api_key_env)) or guard_problem(a)
    if problem is not None:
        sys.exit(f"llamafactory_api.py: {problem}: nothing was restarted")
    key = os.environ[a.api_key_env].strip()
    os.makedirs(a.state_dir, exist_ok=True)
    stop(a.state_dir, a.grace)
    began = time.monotonic()
    server = spawn(a, key)
    with open(os.path.join(a.state_dir, PID_FILE + ".tmp"), "w", encoding="utf-8") as f:
        f.write(str(server.pid))
    os.replace(os.path.join(a.state_dir, PID_FILE + ".tmp"), os.path.join(a.state_dir, PID_FILE))
    while time.monotonic() - began < a.timeout:
        if server.poll() is not None:
            os.remove(os.path.join(a.state_dir, PID_FILE))
            sys.exit(f"llamafactory_api.py: the server exited with {server.returncode} before serving {a.name}; "
                     f"the end of {os.path.join(a.state_dir, LOG_FILE)}:\n{log_tail(os.path.join(a.state_dir, LOG_FILE))}")
        if a.name in (served_names(a.host, a.port, key) or []):
            print(f"serving {a.name} on port {a.port} (pid {server.pid}) after {time.monotonic() - began:.1f} s", file=sys.stderr)
            return
        time.sleep(0.5)
    stop(a.state_dir, a.grace)
    sys.exit(f"llamafactory_api.py: the server did not serve {a.name} within {a.timeout:.0f} s; the end of its log:\n"
             f"{log_tail(os.path.join(a.state_dir, LOG_FILE))}")


def key_problem(name, value):
    """Why the key in variable `name` cannot guard the server, or None."""
    if not value or not value.strip():
        return f"--api-key-env names {name}, which is not set (the server always demands a key)"
    if len(value.strip()) < 16 or any(c.isspace() for c in value.strip()):
        return f"--api-key-env names {name}, whose key is shorter than 16 characters or holds whitespace"
    return None


def guard_problem(a):
    """Why the guard's settings cannot be used, or None."""
    for flag, value in (("--max-n", a.max_n), ("--max-body-bytes", a.max_body_bytes), ("--max-images", a.max_images), ("--max-image-pixels", a.max_image_pixels)):
        if value < 1:
            return f"{flag} must be at least 1, got {value}"
    if a.image_endpoint is not None:
        try:
            planner_guard.endpoint_of(a.image_endpoint)
        except ValueError as err:
            return f"--image-endpoint: {err}"
    return None


def seed_each_request(engine, torch):
    """Makes the engine seed torch's generator with the request's seed before each generation (one at a time)."""
    import threading

    one_at_a_time = threading.Lock()

    def seeded(generate):
        def run(*args):
            with one_at_a_time:
                seed = planner_guard.REQUEST_SEED.get()
                if seed is not None:
                    torch.manual_seed(seed)
                return generate(*args)

        return staticmethod(run)

    engine._chat = seeded(engine._chat)
    # A stream generates on a thread of its own after _stream_chat returns; MAX_CONCURRENT=1 keeps it alone.
    engine._stream_chat = seeded(engine._stream_chat)


def guard_policy(seed, settings):
    """planner_guard's Policy from the settings `spawn` passed and the environment; the S3 host's addresses looked up now."""
    endpoint = None if settings["image_endpoint"] is None else planner_guard.endpoint_of(settings["image_endpoint"])
    addresses = frozenset() if endpoint is None else frozenset(planner_guard.resolve(endpoint[1], endpoint[2]))
    return planner_guard.Policy(key=os.environ["API_KEY"], model=os.environ["API_MODEL_NAME"], seed=seed, hosts=frozenset(settings["hosts"]),
                                limits=planner_guard.Limits(**settings["limits"]), image_endpoint=endpoint, image_addresses=addresses)


def serve(seed, settings, llamafactory_args):
    """The server process: what LLaMA-Factory's API entry point (`llamafactory-cli api`) runs, each request
    seeded and the app behind planner_guard, without its CORS middleware (`*`)."""
    import torch
    import transformers
    import uvicorn
    from fastapi.middleware.cors import CORSMiddleware
    from llamafactory.api.app import create_app
    from llamafactory.chat import ChatModel
    from llamafactory.chat.hf_engine import HuggingfaceEngine

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainers"))
    import llamafactory_mrope

    llamafactory_mrope.install()  # Qwen2.5-VL's 3D positions, as LLaMA-Factory trained them
    transformers.set_seed(seed)
    seed_each_request(HuggingfaceEngine, torch)
    policy = guard_policy(seed, settings)
    sys.argv = [sys.argv[0], *llamafactory_args]
    app = create_app(ChatModel())
    app.user_middleware = [m for m in app.user_middleware if m.cls is not CORSMiddleware]
    uvicorn.run(planner_guard.guard(app, policy), host=os.environ["API_HOST"], port=int(os.environ["API_PORT"]))


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4:])
        return
    a = parse_args(sys.argv[1:])
    if a.command == "stop":
        stop(a.state_dir, a.grace)
    else:
        start(a)


if __name__ == "__main__":
    main()
