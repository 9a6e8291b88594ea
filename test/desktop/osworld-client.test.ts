import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOsworldClient, type OsworldClient } from '../../io/osworld-client';
import { VmHttpError } from '../../io/vm-http-error';
import { startOsworldServerDouble, type OsworldServerDouble } from '../../doubles/osworld-server';
import { rejectsWith } from '../support/desktop';
import { freePort } from '../../infra/ephemeral';

/**
 * The contract suite runs against the test double, or against a real in-VM server when
 * OSWORLD_SERVER_URL names one (it needs /tmp, sh and printf there, as every OSWorld VM has).
 */
const realServer = process.env.OSWORLD_SERVER_URL;

function pngSize(png: Buffer): { width: number; height: number } {
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * TEST DOUBLE of the VM's pyautogui, which this machine lacks: answers `python -c "import
 * pyautogui; ..."` commands, remembering where click/moveTo put the pointer. Other commands run.
 */
function pyautoguiStandIn(): (command: unknown) => { output: string; error: string; returncode: number } | undefined {
  let pointer = { x: 0, y: 0 };
  return (command) => {
    const code = Array.isArray(command) && typeof command[2] === 'string' ? command[2] : '';
    if (!code.includes('import pyautogui')) return undefined;
    for (const m of code.matchAll(/pyautogui\.(?:click|moveTo)\((\d+), (\d+)/g)) pointer = { x: Number(m[1]), y: Number(m[2]) };
    return { output: code.includes('pyautogui.position()') ? `${pointer.x} ${pointer.y}\n` : '', error: '', returncode: 0 };
  };
}

/** Sends one raw HTTP/1.1 request asking to keep the connection; answers the response and whether the server closed the connection after it. */
function exchange(url: string, request: string): Promise<{ response: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    // A server that keeps the connection open is noticed here instead of hanging the test.
    const keptOpen = setTimeout(() => {
      socket.destroy();
      resolve({ response, closed: false });
    }, 10_000);
    socket.on('data', (chunk) => (response += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      clearTimeout(keptOpen);
      resolve({ response, closed: true });
    });
    socket.write(request);
  });
}

/** The text of a page's <title>. */
const titleOf = (page: string): string => /<title>([\s\S]*?)<\/title>/.exec(page)?.[1] ?? '';

describe(`OSWorld client against ${realServer ? `the in-VM server at ${realServer}` : 'the in-VM server test double'}`, () => {
  let double: OsworldServerDouble | undefined;
  let client: OsworldClient;
  /** A scratch folder on the server's machine. */
  const dir = `/tmp/coda-osworld-test-${randomUUID()}`;

  before(async () => {
    if (!realServer) double = await startOsworldServerDouble({ execute: pyautoguiStandIn() });
    client = createOsworldClient(realServer ?? (double as OsworldServerDouble).url, { retries: 0 });
    assert.equal((await client.execute(['mkdir', '-p', dir])).returncode, 0);
  });

  after(async () => {
    await client.execute(['rm', '-rf', dir]);
    await double?.close();
  });

  it('GET /platform answers Linux', async () => {
    assert.equal(await client.platform(), 'Linux');
  });

  it('GET /screenshot is a PNG of the size POST /screen_size reports', async () => {
    const png = await client.screenshot();
    const size = await client.screenSize();
    assert.deepEqual(pngSize(png), size);
    assert.ok(size.width >= 320 && size.height >= 240, `implausible screen ${JSON.stringify(size)}`);
  });

  it('POST /execute runs an argv list without a shell: metacharacters arrive as data', async () => {
    const marker = `${dir}/pwned`;
    const payload = `a'b"c; touch ${marker} $(touch ${marker}) \`touch ${marker}\` | cat && echo x\nnext line`;
    const result = await client.execute(['printf', '%s', payload]);
    assert.deepEqual(result, { output: payload, error: '', returncode: 0 });
    const check = await client.execute(['test', '-e', marker]);
    assert.equal(check.returncode, 1, 'the marker file must not exist');
  });

  it('POST /execute reports a failing command by its exit code and stderr', async () => {
    const result = await client.execute(['sh', '-c', 'echo partial; echo broken >&2; exit 3']);
    assert.deepEqual(result, { output: 'partial\n', error: 'broken\n', returncode: 3 });
  });

  it('POST /execute with shell: true goes through the shell', async () => {
    const result = await client.execute('echo $((6 * 7))', { shell: true });
    assert.equal(result.output, '42\n');
  });

  it('POST /execute of a missing program fails with the server, endpoint, status and reason', async () => {
    const err = await rejectsWith(client.execute(['/nonexistent/coda-binary']), VmHttpError);
    assert.equal(err.status, 500);
    assert.equal(err.failure, 'status');
    assert.match(err.message, /^POST \/execute on http:\/\/\S+: HTTP 500/);
    assert.ok(err.message.includes(client.url));
    assert.match(err.message, /nonexistent\/coda-binary/);
  });

  it('POST /write, /append and GET /read round-trip UTF-8 text', async () => {
    const path = `${dir}/notes é.txt`;
    await client.writeFile(path, 'a := vector{-1, root(3, 3)}\n');
    await client.appendFile(path, 'ß ∑ "quoted"\n');
    assert.equal(await client.readFile(path), 'a := vector{-1, root(3, 3)}\nß ∑ "quoted"\n');
    await client.writeFile(path, 'replaced');
    assert.equal(await client.readFile(path), 'replaced');
  });

  it('GET /read of a missing file fails naming the endpoint, the 500 and the exception, never the debugger page', async () => {
    const err = await rejectsWith(client.readFile(`${dir}/missing.txt`), VmHttpError);
    assert.equal(err.status, 500);
    assert.equal(err.endpoint, 'GET /read');
    assert.equal(err.message, `GET /read on ${client.url}: HTTP 500 INTERNAL SERVER ERROR: FileNotFoundError: [Errno 2] No such file or directory: '${dir}/missing.txt'`);
  });

  it('POST /setup/launch starts a command without waiting for it', async () => {
    const path = `${dir}/launched.txt`;
    const started = Date.now();
    await client.launch(['sh', '-c', `sleep 0.5; echo started > '${path}'`]);
    assert.ok(Date.now() - started < 500, 'launch must not wait for the command');
    let content = '';
    for (let i = 0; i < 50 && content === ''; i++) {
      await sleep(100);
      content = await client.readFile(path).catch(() => '');
    }
    assert.equal(content, 'started\n');
  });

  it('a pyautogui click sent through POST /execute moves the pointer that cursorPosition reads', async () => {
    const click = await client.execute(['python', '-c', 'import pyautogui; pyautogui.FAILSAFE = False; pyautogui.click(321, 123)']);
    assert.equal(click.returncode, 0, click.error);
    assert.deepEqual(await client.cursorPosition(), { x: 321, y: 123 });
    const move = await client.execute(['python', '-c', 'import pyautogui; pyautogui.moveTo(17, 9)']);
    assert.equal(move.returncode, 0, move.error);
    assert.deepEqual(await client.cursorPosition(), { x: 17, y: 9 });
  });

  it('GET /accessibility answers the AT-SPI tree as XML', async () => {
    const tree = await client.accessibilityTree();
    assert.match(tree, /^<desktop-frame[\s>]/);
  });

  it('answers an uncaught exception with a 500 debugger page: the exception line in the title, the secret in a script', async () => {
    const response = await fetch(`${client.url}/read?path=${encodeURIComponent(`${dir}/missing.txt`)}`);
    const page = await response.text();
    assert.equal(response.status, 500);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(titleOf(page), `FileNotFoundError: [Errno 2] No such file or directory: &#39;${dir}/missing.txt&#39;\n // Werkzeug Debugger`);
    assert.match(page, /<script>[^<]*SECRET = "\w+";/);
  });

  it('answers 405 with the allowed methods, in any order (Werkzeug\'s follows the hash seed), to a known route called with another', async () => {
    const methodsOf405 = async (url: string): Promise<string[] | undefined> => {
      const response = await fetch(`${url}/execute`);
      assert.equal(response.status, 405);
      assert.equal(titleOf(await response.text()), '405 Method Not Allowed');
      return response.headers.get('allow')?.split(', ');
    };
    assert.deepEqual(new Set(await methodsOf405(client.url)), new Set(['POST', 'OPTIONS']));
    if (realServer) return;
    // The other order, which the real server sends after some of its starts.
    const reversed = await startOsworldServerDouble({ allowOrder: 'reversed' });
    try {
      assert.deepEqual(await methodsOf405(reversed.url), ['OPTIONS', 'POST']);
      assert.deepEqual(new Set(await methodsOf405(reversed.url)), new Set(['POST', 'OPTIONS']));
    } finally {
      await reversed.close();
    }
  });

  it('answers 415 when a JSON route gets a body of another Content-Type', async () => {
    const response = await fetch(`${client.url}/execute`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"command": ["true"]}' });
    assert.equal(response.status, 415);
    assert.match(await response.text(), /<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application\/json&#39;.<\/p>/);
  });

  it('answers 400 to malformed JSON', async () => {
    const response = await fetch(`${client.url}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"command": [' });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /<p>Failed to decode JSON object: /);
  });

  it('POST /execute splits a string command like shlex when there is no shell', async () => {
    const result = await client.execute(`printf %s| 'a b' "c \\"d\\" \\\\" e\\ f '$HOME'`);
    assert.deepEqual(result, { output: 'a b|c "d" \\|e f|$HOME|', error: '', returncode: 0 });
  });

  it('POST /execute with shell: true runs only the first element of a list; the rest become $0, $1', async () => {
    const result = await client.execute(['echo run: "$0" "$1"', 'second', 'third'], { shell: true });
    assert.equal(result.output, 'run: second third\n');
  });

  it('POST /execute expands arguments that start with ~/ and no others', async () => {
    const home = (await client.execute(['sh', '-c', 'printf %s "$HOME"'])).output;
    const result = await client.execute(['printf', '%s|', '~/notes.txt', '~', 'a~/b', '~root/x']);
    assert.equal(result.output, `${home}/notes.txt|~|a~/b|~root/x|`);
  });

  it('POST /execute reads the output as text: \\r\\n and \\r become \\n', async () => {
    const result = await client.execute(['printf', 'a\\r\\nb\\rc\\n']);
    assert.equal(result.output, 'a\nb\nc\n');
  });

  it('POST /execute answers a 500 for output that is not UTF-8', async () => {
    const err = await rejectsWith(client.execute(['printf', '\\377']), VmHttpError);
    assert.equal(err.status, 500);
    assert.match(err.message, /'utf-8' codec can't decode byte 0xff in position 0: invalid start byte$/);
  });

  it('GET /read reads text mode: \\r\\n and \\r become \\n', async () => {
    const path = `${dir}/crlf.txt`;
    await client.writeFile(path, 'a\r\nb\rc\n');
    assert.equal((await client.execute(['od', '-An', '-c', path])).output.replace(/\s+/g, ''), 'a\\r\\nb\\rc\\n');
    assert.equal(await client.readFile(path), 'a\nb\nc\n');
  });

  it('POST /setup/launch answers a 500 for a program that cannot start, but 200 when a shell starts it', async () => {
    const err = await rejectsWith(client.launch(['/nonexistent/kalgebra', '8000']), VmHttpError);
    assert.equal(err.status, 500);
    assert.match(err.message, /\[Errno 2\] No such file or directory: '\/nonexistent\/kalgebra'$/);
    await client.launch('/nonexistent/kalgebra 8000', { shell: true });
  });

  it('closes the connection after each response', async () => {
    const { response, closed } = await exchange(client.url, 'GET /platform HTTP/1.1\r\nHost: vm\r\nConnection: keep-alive\r\n\r\n');
    assert.match(response, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(response, /\r\nConnection: close\r\n/i);
    assert.equal(closed, true, 'the server kept the connection open');
  });
});

describe('OSWorld client failure handling (in-VM server test double)', () => {
  let double: OsworldServerDouble;

  beforeEach(async () => {
    double = await startOsworldServerDouble({ execute: pyautoguiStandIn() });
  });

  afterEach(async () => {
    await double.close();
  });

  const requestsTo = (path: string) => double.requests.filter((r) => r.path.split('?')[0] === path).length;

  it('sends /execute as {command: argv, shell: false}, the argv untouched', async () => {
    const client = createOsworldClient(double.url);
    const argv = ['python', '-c', 'import pyautogui; pyautogui.typewrite("x\'; rm -rf / #")'];
    assert.equal((await client.execute(argv)).returncode, 0);
    const sent = double.requests.find((r) => r.path === '/execute');
    assert.deepEqual(JSON.parse(sent?.body ?? 'null'), { command: argv, shell: false });
  });

  it('does not retry an HTTP 500, and says what the server said', async () => {
    const client = createOsworldClient(double.url, { retries: 3, backoffMs: 10 });
    double.fault('/screenshot', { kind: 'status', status: 500, contentType: 'application/json', body: '{"status":"error","message":"X display :0 is gone"}' });
    const err = await rejectsWith(client.screenshot(), VmHttpError);
    assert.equal(err.message, `GET /screenshot on ${double.url}: HTTP 500 INTERNAL SERVER ERROR: X display :0 is gone`);
    assert.equal(requestsTo('/screenshot'), 1);
  });

  it('says what a Werkzeug error page says, never its markup', async () => {
    const client = createOsworldClient(double.url, { retries: 0 });
    double.fault('/execute', {
      kind: 'status',
      status: 415,
      body: "<!doctype html>\n<html lang=en>\n<title>415 Unsupported Media Type</title>\n<h1>Unsupported Media Type</h1>\n<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application/json&#39;.</p>\n",
    });
    const err = await rejectsWith(client.execute(['true']), VmHttpError);
    assert.equal(
      err.message,
      `POST /execute on ${double.url}: HTTP 415 UNSUPPORTED MEDIA TYPE: Did not attempt to load JSON data because the request Content-Type was not 'application/json'.`,
    );
  });

  it('keeps the debugger\'s secret and the traceback out of its errors', async () => {
    const client = createOsworldClient(double.url, { retries: 0 });
    const err = await rejectsWith(client.readFile('/nonexistent/notes.txt'), VmHttpError);
    const page = await (await fetch(`${double.url}/read?path=%2Fnonexistent%2Fnotes.txt`)).text();
    const secret = /SECRET = "(\w+)"/.exec(page)?.[1];
    assert.ok(secret, 'the double serves a debugger page with a secret');
    assert.equal(err.message.includes(secret), false);
    assert.doesNotMatch(err.message, /SECRET|CONSOLE_MODE|Traceback|main\.py/);
    assert.match(err.message, /: HTTP 500 INTERNAL SERVER ERROR: FileNotFoundError: \[Errno 2\] No such file or directory: '\/nonexistent\/notes\.txt'$/);
  });

  it('retries an idempotent read through 503s with backoff', async () => {
    const client = createOsworldClient(double.url, { retries: 3, backoffMs: 20 });
    double.fault('/screenshot', { kind: 'status', status: 503 }, 2);
    const started = Date.now();
    const png = await client.screenshot();
    assert.deepEqual(pngSize(png), { width: 1280, height: 800 });
    assert.equal(requestsTo('/screenshot'), 3);
    assert.ok(Date.now() - started >= 20 + 40, 'expected two pauses, 20 then 40 ms');
  });

  it('times out a read that never answers, retrying it, and names the timeout', async () => {
    const client = createOsworldClient(double.url, { timeoutMs: 200, retries: 1, backoffMs: 10 });
    double.fault('/platform', { kind: 'hang' }, 2);
    const err = await rejectsWith(client.platform(), VmHttpError);
    assert.equal(err.failure, 'timeout');
    assert.equal(err.message, `GET /platform on ${double.url}: no answer within 200 ms`);
    assert.equal(requestsTo('/platform'), 2);
  });

  it('never resends a command that timed out: it may have run', async () => {
    const client = createOsworldClient(double.url, { executeTimeoutMs: 200, retries: 3, backoffMs: 10 });
    double.fault('/execute', { kind: 'hang' });
    const err = await rejectsWith(client.execute(['true']), VmHttpError);
    assert.equal(err.failure, 'timeout');
    assert.equal(requestsTo('/execute'), 1);
  });

  it('never resends an append whose connection dropped, but does resend a read', async () => {
    const client = createOsworldClient(double.url, { retries: 2, backoffMs: 10 });
    double.fault('/append', { kind: 'drop' });
    const err = await rejectsWith(client.appendFile('/dev/null', 'x'), VmHttpError);
    assert.equal(err.failure, 'connection');
    assert.equal(requestsTo('/append'), 1);

    double.fault('/read', { kind: 'drop' });
    assert.equal(await client.readFile('/dev/null'), '');
    assert.equal(requestsTo('/read'), 2);
  });

  it('reports a refused connection with the server and endpoint', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const client = createOsworldClient(url, { retries: 1, backoffMs: 10 });
    const err = await rejectsWith(client.execute(['true']), VmHttpError);
    assert.equal(err.failure, 'connection');
    assert.equal(err.code, 'ECONNREFUSED');
    assert.equal(err.message, `POST /execute on ${url}: connection refused: nothing listens there (ECONNREFUSED)`);
  });

  it('resends even a command while the connection is refused, since it never arrived', async () => {
    const port = await freePort();
    const client = createOsworldClient(`http://127.0.0.1:${port}`, { retries: 6, backoffMs: 50 });
    const pending = client.execute(['printf', 'ran once']);
    await sleep(150);
    const late = await startOsworldServerDouble({ port });
    try {
      assert.deepEqual(await pending, { output: 'ran once', error: '', returncode: 0 });
      assert.equal(late.executed.length, 1);
    } finally {
      await late.close();
    }
  });

  it('rejects a screenshot that is not a PNG as a protocol failure', async () => {
    const client = createOsworldClient(double.url);
    double.fault('/screenshot', { kind: 'status', status: 200, body: '<html>login</html>' });
    const err = await rejectsWith(client.screenshot(), VmHttpError);
    assert.equal(err.failure, 'protocol');
    assert.equal(err.message, `GET /screenshot on ${double.url}: expected a complete PNG, got 18 bytes of text/html: no PNG signature`);
  });

  it('rejects an empty or truncated PNG as a protocol failure (what overlapping screenshots get from the server)', async () => {
    const client = createOsworldClient(double.url, { retries: 0 });
    const png = await client.screenshot();
    double.fault('/screenshot', { kind: 'status', status: 200, contentType: 'image/png', body: Buffer.alloc(0) });
    assert.match((await rejectsWith(client.screenshot(), VmHttpError)).message, /: expected a complete PNG, got 0 bytes of image\/png: no PNG signature$/);
    double.fault('/screenshot', { kind: 'status', status: 200, contentType: 'image/png', body: png.subarray(0, png.length - 12) });
    const truncated = await rejectsWith(client.screenshot(), VmHttpError);
    assert.equal(truncated.failure, 'protocol');
    assert.match(truncated.message, new RegExp(`: expected a complete PNG, got ${png.length - 12} bytes of image/png: no IEND chunk$`));
    double.fault('/screenshot', { kind: 'status', status: 200, contentType: 'image/png', body: png.subarray(0, 1000) });
    assert.match((await rejectsWith(client.screenshot(), VmHttpError)).message, /: expected a complete PNG, got 1000 bytes of image\/png: chunk IDAT at byte \d+ runs past the end$/);
  });

  it('sends a VM one request at a time: parallel screenshots, which share one file on the server, all come back complete', async () => {
    const client = createOsworldClient(double.url, { retries: 0 });
    const shots = await Promise.all(Array.from({ length: 6 }, () => client.screenshot()));
    assert.equal(double.screenshotsAtOnce(), 1);
    for (const png of shots) assert.equal(png.subarray(-8, -4).toString('latin1'), 'IEND');
  });

  it('rejects an /execute answer of the wrong shape as a protocol failure', async () => {
    const client = createOsworldClient(double.url);
    double.fault('/execute', { kind: 'status', status: 200, contentType: 'application/json', body: '{"status":"success","output":"x"}' });
    const err = await rejectsWith(client.execute(['true']), VmHttpError);
    assert.equal(err.failure, 'protocol');
    assert.match(err.message, /POST \/execute on .*: unexpected answer \(error: .*returncode: /);
  });

  it('reads the pointer through pyautogui when /cursor_position answers 500 (OSWorld #117)', async () => {
    const client = createOsworldClient(double.url, { python: 'python3' });
    await client.execute(['python3', '-c', 'import pyautogui; pyautogui.click(640, 400)']);
    assert.deepEqual(await client.cursorPosition(), { x: 640, y: 400 });
    assert.equal(requestsTo('/cursor_position'), 1);
    const asked = double.executed.at(-1);
    assert.equal(asked?.shell, false);
    assert.deepEqual((asked?.command as string[]).slice(0, 2), ['python3', '-c']);
  });

  it('answers a command whose background child still holds the output pipe only at the timeout, with a 500', async function () {
    this.timeout(20_000);
    const slow = await startOsworldServerDouble({ executeTimeoutSeconds: 1 });
    try {
      const client = createOsworldClient(slow.url, { retries: 0 });
      const err = await rejectsWith(client.execute(['sh', '-c', 'sleep 3 & echo typed']), VmHttpError);
      assert.equal(err.status, 500);
      assert.match(err.message, /Command '\['sh', '-c', 'sleep 3 & echo typed'\]' timed out after 1 seconds$/);
    } finally {
      await slow.close();
    }
  });

  it('runs out of X clients after leaking one per screenshot: one 500, then the crash refuses every connection', async () => {
    const leaking = await startOsworldServerDouble({ screenshotsBeforeXRefuses: 2 });
    try {
      const client = createOsworldClient(leaking.url, { retries: 0 });
      await client.screenshot();
      await client.screenshot();
      const refused = await rejectsWith(client.screenshot(), VmHttpError);
      assert.match(refused.message, /HTTP 500 .*CalledProcessError/);
      const crashed = await rejectsWith(client.screenshot(), VmHttpError);
      assert.equal(crashed.failure, 'connection');
      assert.equal((await rejectsWith(client.platform(), VmHttpError)).code, 'ECONNREFUSED');
      assert.equal(leaking.crashes(), 1);
    } finally {
      await leaking.close();
    }
  });

  it('takes the pointer from a /cursor_position that answers [x, y]', async () => {
    const client = createOsworldClient(double.url);
    double.fault('/cursor_position', { kind: 'status', status: 200, contentType: 'application/json', body: '[12,34]' });
    assert.deepEqual(await client.cursorPosition(), { x: 12, y: 34 });
    assert.equal(double.executed.length, 0);
  });
});
