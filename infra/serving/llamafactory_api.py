"""The planner served on CPU by LLaMA-Factory's OpenAI-compatible API server: training.serving's restart command.

    llamafactory_api.py start --model BASE [--adapter DIR | --checkpoint DIR] --name NAME --port PORT --state-dir DIR [--seed N]
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
Its request model has no `seed` (a request's seed is dropped), so sampling is seeded once for the whole server, with
--seed (the run seed, CODA_SEED), at start: a server started with the same seed answers the same
requests, sent in the same order, with the same samples, and one request sent twice draws twice.
The server generates with Qwen2.5-VL's 3D positions (infra/trainers/llamafactory_mrope.py), which
LLaMA-Factory's engine drops with transformers 5: without them a planner it trained is served
positions it never saw.
--api-key-env NAME makes the server demand the key that variable holds as a Bearer token (the
planner's models.planner.apiKeyEnv); without it the server takes any key, or none.
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
    start.add_argument("--api-key-env", help="the variable holding the key the server demands (models.planner.apiKeyEnv)")
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
    request = urllib.request.Request(f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{port}/v1/models")
    if key is not None:
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
    command = [sys.executable, os.path.abspath(__file__), "serve", str(a.seed),
               "--model_name_or_path", a.model, "--template", a.template, "--infer_backend", "huggingface",
               # vLLM's defaults where a request sets none (LLaMA-Factory's own are top_p 0.7 and top_k 50): the
               # model's whole distribution at the request's temperature, as a trainer samples it.
               "--top_p", "1.0", "--top_k", "0"]
    if a.adapter is not None:
        command += ["--adapter_name_or_path", a.adapter]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1", "API_HOST": a.host, "API_PORT": str(a.port),
           "API_MODEL_NAME": a.name,
           # LLaMA-Factory logs every request whole by default: each screenshot's base64 included.
           "API_VERBOSE": "0"}
    env.pop("API_KEY", None)
    if key is not None:
        env["API_KEY"] = key
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
    key = None if a.api_key_env is None else os.environ.get(a.api_key_env)
    if a.api_key_env is not None and not key:
        sys.exit(f"llamafactory_api.py: --api-key-env names {a.api_key_env}, which is not set: nothing was restarted")
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


def only_served(app, name):
    """The ASGI app `app` answering a chat request that names another model than `name` as vLLM does
    (404, "The model `x` does not exist."): LLaMA-Factory's own server answers any name with the
    model it serves, so a stage that asked for a planner not yet registered would be answered by
    the previous one without a word."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith("/chat/completions"):
            return await app(scope, receive, send)
        received, body = [], b""
        while True:
            message = await receive()
            received.append(message)
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        try:
            model = json.loads(body).get("model")
        except (ValueError, AttributeError):
            model = None  # LLaMA-Factory answers a malformed body itself
        if isinstance(model, str) and model != name:
            payload = json.dumps({"object": "error", "message": f"The model `{model}` does not exist.",
                                  "type": "NotFoundError", "param": None, "code": 404}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return

        async def replay():
            return received.pop(0) if received else await receive()

        await app(scope, replay, send)

    return guarded


def serve(seed, llamafactory_args):
    """The server process: the run seed, then what LLaMA-Factory's API entry point (`llamafactory-cli api`) runs, guarded by only_served."""
    import transformers
    import uvicorn
    from llamafactory.api.app import create_app
    from llamafactory.chat import ChatModel

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainers"))
    import llamafactory_mrope

    llamafactory_mrope.install()  # Qwen2.5-VL's 3D positions, as LLaMA-Factory trained them
    transformers.set_seed(seed)
    sys.argv = [sys.argv[0], *llamafactory_args]
    app = create_app(ChatModel())
    uvicorn.run(only_served(app, os.environ["API_MODEL_NAME"]), host=os.environ["API_HOST"], port=int(os.environ["API_PORT"]))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3:])
        return
    a = parse_args(sys.argv[1:])
    if a.command == "stop":
        stop(a.state_dir, a.grace)
    else:
        start(a)


if __name__ == "__main__":
    main()
