"""What the planner server (infra/serving/llamafactory_api.py) checks before LLaMA-Factory's API sees a request.

LLaMA-Factory 0.9.5's server answers anyone without API_KEY, sends `Access-Control-Allow-Origin: *`,
never looks at Host, and reads whatever body, `n`, image or path a request names: a web page in the
operator's browser could read its answers (DNS rebinding), a stranger could make it hold gigabytes
(`n` = 2048) or read a 64 MiB body before the 401, and an image URL could make it fetch from
loopback (its address check resolves the name, then `requests` resolves it again) or tell a file
that exists from one that does not. guard() wraps the app so that, in this order:
1. a Host other than the bind address or the names given at start is 403 (a wildcard bind also
   answers its loopback address, where the launcher checks it); any request with an Origin header,
   which browsers send on cross-origin requests, is 403 (the app's CORS middleware is removed too);
2. every route but GET /health demands the key as a Bearer token (401), before any body is read;
3. a body declared or received beyond max_body_bytes is 413, the rest unread;
4. a chat request naming another model than the one served is 404 as vLLM answers it; `n` beyond
   max_n, more than max_images images, an image beyond max_image_pixels (read from its header), a
   video or audio part, or an image that is neither a data: URL nor an http(s) URL of the S3
   endpoint given at start (a local path included: no file is looked at) is 400;
5. an S3 image is fetched here: its name resolved once, each address checked (public, or one the
   S3 host had at start; never link-local, multicast or unspecified), the connection made to the
   address checked, no redirect followed, the body capped; LLaMA-Factory gets it as a data: URL;
6. the request's sampling seed (REQUEST_SEED) is derived from the server's seed and the request's
   own `seed`, or the whole request when it has none, so no request consumes another's draws.
Standard library only (PIL is imported when an image is measured, in the server's venv), so its
checks are unit-tested with any python3: test/unit/planner_guard_test.py.
"""

import asyncio
import base64
import contextvars
import hashlib
import hmac
import http.client
import io
import ipaddress
import json
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# The sampling seed of the request being answered; the engine seeds its draws with it (llamafactory_api.py).
REQUEST_SEED = contextvars.ContextVar("planner_request_seed", default=None)
# LLaMA-Factory's own pattern for an inline image (api/chat.py): anything else it would open as a path or fetch.
DATA_IMAGE = re.compile(r"^data:image\/(png|jpg|jpeg|gif|bmp);base64,(.+)$")
WILDCARDS = ("0.0.0.0", "::", "")
IMAGE_FETCH_SECONDS = 30


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 16 * 1024 * 1024
    max_n: int = 16
    max_images: int = 8
    max_image_pixels: int = 3840 * 2160


@dataclass(frozen=True)
class Policy:
    key: str
    model: str
    seed: int
    hosts: frozenset
    limits: Limits = field(default_factory=Limits)
    # The S3 endpoint image URLs may name: (scheme, host, port), and the addresses its name had at start.
    image_endpoint: tuple = None
    image_addresses: frozenset = frozenset()


class Refused(Exception):
    def __init__(self, status, detail):
        super().__init__(detail)
        self.status, self.detail = status, detail


def host_of(header):
    """The name or address a Host header names, lowercased, without its port; None when it is no host."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1:]
        return value[1:end] if end > 1 and (rest == "" or rest.startswith(":")) else None
    name = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return name.rstrip(".") or None


def allowed_hosts(bind, names=()):
    """The Host values a server bound to `bind` answers: the bind address and the names given at start."""
    hosts = {bind.lower(), *(n.lower().rstrip(".") for n in names)}
    if bind in WILDCARDS:
        hosts |= {"127.0.0.1", "::1"}
    return frozenset(hosts - {""})


def endpoint_of(url):
    """(scheme, host, port) of an http(s) URL, the port filled in; ValueError for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None or parts.password is not None:
        raise ValueError(f"expected an http(s) URL with a host and no credentials, got {url!r}")
    return parts.scheme, parts.hostname.lower(), parts.port or (443 if parts.scheme == "https" else 80)


def header_refusal(scope, policy):
    """Why the request's headers alone are refused (a Refused), or None: Host, Origin, then the key."""
    headers = {}
    for name, value in scope.get("headers", []):
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    host = host_of(headers.get("host", ""))
    if host not in policy.hosts:
        return Refused(403, "Not a host this server answers")
    if "origin" in headers:
        return Refused(403, "Cross-origin requests are not answered")
    if scope["method"] == "GET" and scope["path"] == "/health":
        return None
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), policy.key.encode()):
        return Refused(401, "Invalid API key.")
    return None


def address_problem(address, start_addresses):
    """Why an image may not be fetched from `address`, or None: public, or one the S3 host had at start."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_link_local or ip.is_multicast or ip.is_unspecified:
        return f"{ip} is link-local, multicast or unspecified"
    if ip.is_global or str(ip) in start_addresses:
        return None
    return f"{ip} is not public and not an address the S3 host had at start"


def resolve(host, port):
    """Every address `host` answers now (one lookup)."""
    return sorted({info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


def fetch_image(url, policy, lookup=resolve):
    """The bytes of an S3 image URL: the name looked up once, every address checked, the first connected to."""
    try:
        endpoint = endpoint_of(url)
    except ValueError:
        endpoint = None
    if policy.image_endpoint is None or endpoint != policy.image_endpoint:
        raise Refused(400, "image_url: expected a data: URL" + ("" if policy.image_endpoint is None else " or a URL of the S3 endpoint"))
    scheme, host, port = endpoint
    addresses = lookup(host, port)
    problems = [p for p in (address_problem(a, policy.image_addresses) for a in addresses) if p is not None]
    if not addresses or problems:
        raise Refused(400, f"image_url: {problems[0] if problems else 'the S3 host resolves to nothing'}")
    connection_class = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    connection = connection_class(host, port, timeout=IMAGE_FETCH_SECONDS)
    # The Host header (which the presigned signature covers) and TLS keep the name; the socket goes to the address checked.
    connection._create_connection = lambda _address, *rest: socket.create_connection((addresses[0], port), *rest)
    parts = urlsplit(url)
    try:
        connection.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
        response = connection.getresponse()
        body = response.read(policy.limits.max_body_bytes + 1)
    except OSError as err:
        raise Refused(400, f"image_url: the S3 endpoint could not be read ({type(err).__name__})") from None
    finally:
        connection.close()
    if response.status != 200:
        raise Refused(400, f"image_url: the S3 endpoint answered {response.status}")
    if len(body) > policy.limits.max_body_bytes:
        raise Refused(413, f"image_url: the image is over {policy.limits.max_body_bytes} bytes")
    return body


def data_url(image):
    """A data: URL LLaMA-Factory reads, of an image's bytes, its type from their first bytes."""
    kinds = ((b"\x89PNG", "png"), (b"\xff\xd8", "jpeg"), (b"GIF8", "gif"), (b"BM", "bmp"))
    kind = next((k for magic, k in kinds if image.startswith(magic)), None)
    if kind is None:
        raise Refused(400, "image_url: the S3 object is not a PNG, JPEG, GIF or BMP image")
    return f"data:image/{kind};base64,{base64.b64encode(image).decode()}"


def image_pixels(url):
    """The pixels of a data: image by its header, or None when no decoder knows it (LLaMA-Factory answers it)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(base64.b64decode(DATA_IMAGE.match(url).group(2)))) as image:
            return image.size[0] * image.size[1]
    except Image.DecompressionBombError:
        return 2 * Image.MAX_IMAGE_PIXELS + 1  # PIL's own refusal at open: beyond that, whatever the header says
    except Exception:  # noqa: BLE001 - any undecodable image is LLaMA-Factory's to refuse, as before the guard
        return None


def image_parts(body):
    """Every image_url part of a chat body's messages; a video or audio part is refused."""
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in ("video_url", "audio_url"):
                raise Refused(400, "the planner server takes text and images only")
            if kind == "image_url":
                parts.append(part)
    return parts


async def vet_images(body, policy, measure=image_pixels, fetch=fetch_image):
    """Refuses too many or too large images and any other source than data: or the S3 endpoint; S3 images become data: URLs."""
    parts = image_parts(body)
    if len(parts) > policy.limits.max_images:
        raise Refused(400, f"at most {policy.limits.max_images} images a request, got {len(parts)}")
    for part in parts:
        source = part.get("image_url")
        url = source.get("url") if isinstance(source, dict) else None
        if not isinstance(url, str):
            continue  # LLaMA-Factory's request model refuses it (422)
        if DATA_IMAGE.match(url) is None:
            url = data_url(await asyncio.to_thread(fetch, url, policy))
            source["url"] = url
        pixels = measure(url)
        if pixels is not None and pixels > policy.limits.max_image_pixels:
            raise Refused(400, f"an image of at most {policy.limits.max_image_pixels} pixels, got {pixels}")


def request_seed(server_seed, body):
    """The seed of one request's draws: the server's seed with the request's `seed`, or with the whole request."""
    asked = body.get("seed")
    basis = f"seed {asked}" if isinstance(asked, int) and not isinstance(asked, bool) else "body " + json.dumps(body, sort_keys=True)
    return int.from_bytes(hashlib.sha256(f"{server_seed}\x1f{basis}".encode()).digest()[:8], "big") >> 1


async def answer(send, status, payload):
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


async def read_body(scope, receive, limit):
    """The request's body, refused (413) as soon as it is declared or received beyond `limit`."""
    declared = dict(scope.get("headers", [])).get(b"content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Refused(413, f"a body of at most {limit} bytes")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise Refused(400, "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refused(413, f"a body of at most {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def vet_chat(body, policy):
    """Refuses a chat request by what it asks (model, n, images); returns it with S3 images inlined."""
    if isinstance(body.get("model"), str) and body["model"] != policy.model:
        raise Refused(404, None)
    n = body.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n > policy.limits.max_n:
        raise Refused(400, f"n: at most {policy.limits.max_n} samples a request, got {n}")
    await vet_images(body, policy)
    return body


def guard(app, policy):
    """The ASGI app `app` answered only as the module's header says."""

    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        refusal = header_refusal(scope, policy)
        if refusal is None and scope["method"] == "GET" and scope["path"] == "/health":
            return await answer(send, 200, {})
        try:
            if refusal is not None:
                raise refusal
            body = await read_body(scope, receive, policy.limits.max_body_bytes)
            if scope["method"] == "POST" and scope["path"].endswith("/chat/completions"):
                try:
                    request = json.loads(body)
                except ValueError:
                    request = None  # LLaMA-Factory answers a malformed body itself
                if isinstance(request, dict):
                    request = await vet_chat(request, policy)
                    REQUEST_SEED.set(request_seed(policy.seed, request))
                    body = json.dumps(request).encode()
        except Refused as refused:
            if refused.status == 404:
                model = json.loads(body)["model"]
                return await answer(send, 404, {"object": "error", "message": f"The model `{model}` does not exist.", "type": "NotFoundError", "param": None, "code": 404})
            return await answer(send, refused.status, {"detail": refused.detail})
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"] + [(b"content-length", str(len(body)).encode())]
        sent = [False]

        async def replay():
            if sent[0]:
                return await receive()
            sent[0] = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app({**scope, "headers": headers}, replay, send)

    return guarded
