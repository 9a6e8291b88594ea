"""The reward service's token for a GRPO trainer: from its environment, never its command line.

Every user of a machine reads every process's command line (ps, /proc/<pid>/cmdline); a process's
environment only its own user (/proc/<pid>/environ is 0400). So the GPU worker gives the trainer
the reward service's URL without credentials ({rewardUrl}) and the token in CODA_REWARD_TOKEN
(activities/training/reward-service.ts TRAINER_TOKEN_ENV), and the trainer's process puts it into
the URL it posts to: as the URL's password for OpenRLHF 0.11.2, whose aiohttp client sends a URL's
credentials as HTTP Basic (openrlhf_grpo.py), or as the Basic header of trl_grpo.py's client.
"""

import os
import urllib.parse

TOKEN_ENV = "CODA_REWARD_TOKEN"
# Only a label: the reward service checks the password.
USER = "openrlhf"


def reward_token(env=os.environ):
    """The token in CODA_REWARD_TOKEN, or None when it is unset or empty (a service without one)."""
    return env.get(TOKEN_ENV) or None


def check_no_credentials(url, flag):
    """Refuses a URL that carries a user or password: on a command line every local user reads it."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None or parts.password is not None:
        where = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "") + parts.path
        raise SystemExit(f"{flag} {where}: the URL carries credentials, which every user of this machine reads on the command line (ps); give the URL without them and the token in {TOKEN_ENV}")
    return parts


def with_token(urls, token, flag):
    """`urls` (comma-separated, as OpenRLHF splits them) with `token` as each one's password (none: as they are)."""
    completed = []
    for url in urls.split(","):
        parts = check_no_credentials(url, flag)
        if token is not None:
            parts = parts._replace(netloc=f"{USER}:{urllib.parse.quote(token, safe='')}@{parts.netloc}")
        completed.append(urllib.parse.urlunsplit(parts))
    return ",".join(completed)
