"""infra/serving/planner_guard.py's checks, without the server: run by test/unit/planner-guard.test.ts with python3.

Every request stays on 127.0.0.1: the S3 host's name is answered by a stub lookup, and the public
address checked (8.8.8.8) is never connected to.
"""

import asyncio
import http.server
import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "infra", "serving"))
import planner_guard as g  # noqa: E402

KEY = "k" * 32
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def policy(**change):
    settings = dict(key=KEY, model="planner", seed=7, hosts=g.allowed_hosts("127.0.0.1", ["planner.lab"]), limits=g.Limits(max_body_bytes=1024, max_n=4, max_images=2))
    settings.update(change)
    return g.Policy(**settings)


def scope(host="127.0.0.1:8810", key=KEY, method="POST", path="/v1/chat/completions", extra=()):
    headers = [(b"host", host.encode())] + ([(b"authorization", f"Bearer {key}".encode())] if key is not None else []) + list(extra)
    return {"type": "http", "method": method, "path": path, "headers": headers}


class Counting:
    """An ASGI receive offering `chunks` chunks of `size` bytes, counting what was taken."""

    def __init__(self, chunks, size):
        self.left, self.size, self.taken = chunks, size, 0

    async def __call__(self):
        self.left -= 1
        self.taken += self.size
        return {"type": "http.request", "body": b"\0" * self.size, "more_body": self.left > 0}


def run(app, sc, receive):
    """The status and JSON body `app` answers."""
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(app(sc, receive, send))
    return sent[0]["status"], json.loads(sent[1]["body"])


def never_called(*_args):
    raise AssertionError("the app or the lookup was reached")


class Headers(unittest.TestCase):
    def test_a_host_other_than_the_bind_address_or_a_given_name_is_refused(self):
        p = policy()
        for host in ["evil.example", "evil.example:8810", "127.0.0.1.evil.example", "localhost", "10.0.0.1", "[::1]:8810", "planner.lab.evil", "", "a@127.0.0.1"]:
            refusal = g.header_refusal(scope(host=host), p)
            self.assertEqual((refusal.status, refusal.detail), (403, "Not a host this server answers"), host)
        for host in ["127.0.0.1", "127.0.0.1:8810", "PLANNER.lab:8810", "planner.lab."]:
            self.assertIsNone(g.header_refusal(scope(host=host), p), host)

    def test_a_wildcard_bind_answers_its_loopback_address_and_the_given_names_only(self):
        hosts = g.allowed_hosts("0.0.0.0", ["gpu-node-1"])
        self.assertEqual(hosts, frozenset({"0.0.0.0", "127.0.0.1", "::1", "gpu-node-1"}))
        p = policy(hosts=hosts)
        self.assertIsNone(g.header_refusal(scope(host="[::1]:8810"), p))
        self.assertEqual(g.header_refusal(scope(host="attacker.example"), p).status, 403)

    def test_any_origin_is_refused_even_with_the_key(self):
        for origin in [b"http://evil.example", b"null", b"http://127.0.0.1:8810"]:
            refusal = g.header_refusal(scope(extra=[(b"origin", origin)]), policy())
            self.assertEqual((refusal.status, refusal.detail), (403, "Cross-origin requests are not answered"))

    def test_every_route_but_health_demands_the_key(self):
        p = policy()
        for key in [None, "", "k" * 31, "K" * 32]:
            for method, path in [("POST", "/v1/chat/completions"), ("GET", "/v1/models"), ("GET", "/docs"), ("GET", "/openapi.json")]:
                self.assertEqual(g.header_refusal(scope(key=key, method=method, path=path), p).status, 401, (key, path))
        self.assertIsNone(g.header_refusal(scope(), p))
        self.assertIsNone(g.header_refusal(scope(key=None, method="GET", path="/health"), p))
        self.assertEqual(g.header_refusal(scope(key=None, method="GET", path="/health", host="evil.example"), p).status, 403)


class Bodies(unittest.TestCase):
    def test_no_key_is_answered_401_before_any_of_the_body_is_read(self):
        receive = Counting(64, 1024 * 1024)
        sc = scope(key=None, extra=[(b"content-length", str(64 * 1024 * 1024).encode())])
        self.assertEqual(run(g.guard(never_called, policy()), sc, receive), (401, {"detail": "Invalid API key."}))
        self.assertEqual(receive.taken, 0)

    def test_a_body_declared_beyond_the_cap_is_413_unread_and_one_streamed_beyond_it_stops_there(self):
        declared = Counting(64, 1024)
        self.assertEqual(run(g.guard(never_called, policy()), scope(extra=[(b"content-length", b"1025")]), declared)[0], 413)
        self.assertEqual(declared.taken, 0)
        streamed = Counting(64, 512)
        self.assertEqual(run(g.guard(never_called, policy()), scope(), streamed), (413, {"detail": "a body of at most 1024 bytes"}))
        self.assertEqual(streamed.taken, 1536, "read up to the first chunk past the cap, not the 64")

    def test_a_request_within_the_caps_reaches_the_app_whole_with_its_seed(self):
        body = json.dumps({"model": "planner", "messages": [{"role": "user", "content": "hi"}], "n": 4, "seed": 3}).encode()
        seen = {}

        async def app(sc, receive, send):
            seen["body"] = (await receive())["body"]
            seen["length"] = dict(sc["headers"])[b"content-length"]
            seen["seed"] = g.REQUEST_SEED.get()
            await g.answer(send, 200, {})

        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        self.assertEqual(run(g.guard(app, policy()), scope(), receive)[0], 200)
        self.assertEqual(json.loads(seen["body"]), json.loads(body))
        self.assertEqual(int(seen["length"]), len(seen["body"]))
        self.assertEqual(seen["seed"], g.request_seed(7, json.loads(body)))


class Requests(unittest.TestCase):
    def refusal(self, body, **change):
        try:
            asyncio.run(g.vet_chat(body, policy(**change)))
        except g.Refused as refused:
            return refused.status, refused.detail
        return None

    def test_n_images_and_media_beyond_the_caps_are_refused(self):
        user = lambda *parts: {"model": "planner", "messages": [{"role": "user", "content": list(parts)}]}  # noqa: E731
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        self.assertEqual(self.refusal({"model": "planner", "messages": [], "n": 5}), (400, "n: at most 4 samples a request, got 5"))
        self.assertEqual(self.refusal(user(image, image, image)), (400, "at most 2 images a request, got 3"))
        self.assertEqual(self.refusal(user({"type": "video_url", "video_url": {"url": "/etc/hostname"}})), (400, "the planner server takes text and images only"))
        self.assertEqual(self.refusal({"model": "other", "messages": []}), (404, None))

    def test_a_local_path_or_another_host_is_refused_alike_without_a_look(self):
        p = policy(image_endpoint=("http", "s3.test", 9000), image_addresses=frozenset({"127.0.0.1"}))
        answers = set()
        for url in ["/etc/hostname", "/no/such/file", "file:///etc/hostname", "http://127.0.0.1:9000/b/k", "http://s3.test:9001/b/k", "http://user:pw@s3.test:9000/b/k", "ftp://s3.test:9000/b/k"]:
            with self.assertRaises(g.Refused) as caught:
                g.fetch_image(url, p, lookup=never_called)
            answers.add((caught.exception.status, caught.exception.detail))
        self.assertEqual(answers, {(400, "image_url: expected a data: URL or a URL of the S3 endpoint")})
        with self.assertRaises(g.Refused) as caught:
            g.fetch_image("http://s3.test:9000/b/k", policy(), lookup=never_called)
        self.assertEqual(caught.exception.detail, "image_url: expected a data: URL", "no endpoint given at start: data: URLs only")

    def test_the_addresses_an_s3_host_may_answer(self):
        at_start = frozenset({"127.0.0.1", "10.1.2.3"})
        for address in ["127.0.0.1", "10.1.2.3", "::ffff:127.0.0.1", "8.8.8.8"]:
            self.assertIsNone(g.address_problem(address, at_start), address)
        for address in ["127.0.0.2", "10.1.2.4", "::1", "192.168.0.1", "::ffff:192.168.0.1"]:
            self.assertIn("not public and not an address the S3 host had at start", g.address_problem(address, at_start), address)
        for address in ["169.254.169.254", "fe80::1", "0.0.0.0", "224.0.0.1"]:
            self.assertIn("link-local, multicast or unspecified", g.address_problem(address, frozenset({address})), address)


class S3:
    """An HTTP server on 127.0.0.1 serving PNG at any path, recording each request's path and Host."""

    def __init__(self):
        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                seen.append((self.path, self.headers["Host"]))
                self.send_response(200)
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Fetch(unittest.TestCase):
    def setUp(self):
        self.s3 = S3()
        self.addCleanup(self.s3.close)

    def test_the_name_is_looked_up_once_and_the_address_checked_is_the_one_connected_to(self):
        answers = [["127.0.0.1"], ["127.0.0.9"]]
        lookups = []

        def lookup(host, port):
            lookups.append((host, port))
            return answers[min(len(lookups), 2) - 1]

        p = policy(image_endpoint=("http", "s3.test", self.s3.port), image_addresses=frozenset({"127.0.0.1"}))
        self.assertEqual(g.fetch_image(f"http://s3.test:{self.s3.port}/bucket/a.png?X-Amz-Signature=abc", p, lookup=lookup), PNG)
        self.assertEqual(lookups, [("s3.test", self.s3.port)])
        self.assertEqual(self.s3.seen, [("/bucket/a.png?X-Amz-Signature=abc", f"s3.test:{self.s3.port}")], "the name kept in Host, which a presigned URL signs")
        self.assertTrue(g.data_url(PNG).startswith("data:image/png;base64,"))

    def test_a_name_that_answered_a_public_address_at_start_and_answers_loopback_now_is_not_fetched(self):
        p = policy(image_endpoint=("http", "s3.test", self.s3.port), image_addresses=frozenset({"8.8.8.8"}))
        with self.assertRaises(g.Refused) as caught:
            g.fetch_image(f"http://s3.test:{self.s3.port}/bucket/a.png", p, lookup=lambda _h, _p: ["127.0.0.1"])
        self.assertEqual(caught.exception.detail, "image_url: 127.0.0.1 is not public and not an address the S3 host had at start")
        self.assertEqual(self.s3.seen, [], "nothing was asked of the loopback server")


class Seeds(unittest.TestCase):
    def test_a_request_draws_by_the_server_seed_and_its_own_seed_or_body(self):
        a = {"model": "planner", "messages": [{"role": "user", "content": "a"}]}
        self.assertEqual(g.request_seed(1, dict(a)), g.request_seed(1, dict(a)))
        self.assertNotEqual(g.request_seed(1, a), g.request_seed(2, a))
        self.assertNotEqual(g.request_seed(1, a), g.request_seed(1, {**a, "messages": [{"role": "user", "content": "b"}]}))
        self.assertEqual(g.request_seed(1, {**a, "seed": 5}), g.request_seed(1, {"messages": [], "seed": 5}), "a seed decides alone, as vLLM's")
        self.assertNotEqual(g.request_seed(1, {**a, "seed": 5}), g.request_seed(1, {**a, "seed": 6}))
        self.assertLess(g.request_seed(1, a), 2**63)


if __name__ == "__main__":
    unittest.main()
