import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { createOsworldClient, type OsworldClient } from '../../io/osworld-client';
import { VmHttpError } from '../../io/vm-http-error';
import { desktopMarker, killMarked, ManagedProcess, waitFor } from '../../io/process';
import { X11Display } from '../../activities/desktop/local/x11-display';
import { DEFAULT_TOOLS } from '../../activities/desktop/local/tools';
import { startOsworldServerDouble, type OsworldServerDouble } from '../../doubles/osworld-server';
import { listenLocally } from '../../apps/double-server';
import { rejectsWith } from '../support/desktop';
import { freeDisplay, freePort } from '../../infra/ephemeral';

/**
 * The contract suite runs against every in-VM server the client may meet: the test double of
 * ScienceBoard's server, the project's own server (infra/vm-image/server/osworld_server.py, started
 * here on a desktop of its own), and a real in-VM server when OSWORLD_SERVER_URL names one (it needs
 * /tmp, sh and printf there, as every OSWorld VM has).
 */
const realServer = process.env.OSWORLD_SERVER_URL;

const REPO = path.resolve(__dirname, '..', '..', '..');
const SERVER_PY = path.join(REPO, 'infra', 'vm-image', 'server', 'osworld_server.py');
/** Where infra/install.sh puts the VM's PyPI packages (infra/vm-image/install-vm-python.sh), by infra/install-trainers.sh's cache root. */
const VM_PYTHON = path.join(process.env.CODA_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'coda'), 'vm-python');

/** A server under test: its URL, and how to stop it and what it started. */
interface Served {
  readonly url: string;
  stop(): Promise<void>;
}

interface Target {
  readonly name: string;
  start(): Promise<Served>;
}

/**
 * The project's in-VM server as the VM runs it: Debian's /usr/bin/python3 on an X display with an
 * AT-SPI bus (a local desktop's Xvfb, buses and openbox, activities/desktop/local/x11-display.ts),
 * `python` on its PATH being that python, with the VM's pyautogui on PYTHONPATH.
 */
async function startProjectServer(): Promise<Served> {
  if (!existsSync(path.join(VM_PYTHON, 'pyautogui'))) {
    throw new Error(`no pyautogui in ${VM_PYTHON}: run bash infra/install.sh test (or bash infra/vm-image/install-vm-python.sh ${VM_PYTHON})`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'coda-vm-server-'));
  const marker = desktopMarker('vm-server-test');
  const display = new X11Display({ display: freeDisplay(840), screen: { width: 1280, height: 800 }, dir, marker, tools: DEFAULT_TOOLS });
  let server: ManagedProcess | undefined;
  const stop = async () => {
    await server?.stop();
    await display.stop();
    await killMarked(marker); // what the server launched and left running
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await display.start();
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync('/usr/bin/python3', path.join(bin, 'python'));
    const env = display.env();
    const port = await freePort();
    server = ManagedProcess.start({
      name: 'osworld_server.py',
      command: '/usr/bin/python3',
      args: [SERVER_PY, '--host', '127.0.0.1', '--port', String(port)],
      env: { ...env, PATH: `${bin}:${env.PATH}`, PYTHONPATH: VM_PYTHON },
      log: path.join(dir, 'server.log'),
    });
    const url = `http://127.0.0.1:${port}`;
    const started = server;
    await waitFor(
      async () => {
        // The log's end, since the folder that holds it goes with the display.
        if (started.exit !== undefined) throw new Error(`osworld_server.py ${started.problem() ?? 'exited'} while starting: ${readFileSync(started.spec.log, 'utf8').trim().split('\n').slice(-5).join(' | ')}`);
        return (await fetch(`${url}/platform`).then((r) => r.ok, () => false)) ? true : undefined;
      },
      15_000,
      () => `osworld_server.py did not answer on ${url} within 15 s`,
      50,
    );
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const TARGETS: readonly Target[] = [
  {
    name: 'the in-VM server test double',
    async start() {
      const double = await startOsworldServerDouble({ execute: pyautoguiStandIn() });
      return { url: double.url, stop: () => double.close() };
    },
  },
  { name: "the project's in-VM server (infra/vm-image/server/osworld_server.py)", start: () => startProjectServer() },
  ...(realServer ? [{ name: `the in-VM server at ${realServer}`, start: async () => ({ url: realServer, stop: async () => {} }) }] : []),
];

function pngSize(png: Buffer): { width: number; height: number } {
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * TEST DOUBLE of the VM's pyautogui for the server double, which runs no real one (the project's
 * server runs the real pyautogui, from the vm-python folder): answers `python -c "import
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

/** The methods a 405 of `url`/execute (a POST route) names in Allow, in its order. */
async function methodsOf405(url: string): Promise<string[] | undefined> {
  const response = await fetch(`${url}/execute`);
  assert.equal(response.status, 405);
  assert.equal(titleOf(await response.text()), '405 Method Not Allowed');
  return response.headers.get('allow')?.split(', ');
}

/** The client's contract with an in-VM server: what every server of the protocol must do. */
/**
 * Starts a server before a describe's first test and stops it after its last, with a client and
 * a scratch folder of the server's machine (made first, removed last); read them in the tests.
 */
function servedWithScratch(start: () => Promise<Served>, prefix: string): { served: Served; client: OsworldClient; readonly dir: string } {
  const session = { dir: `/tmp/${prefix}-${randomUUID()}` } as { served: Served; client: OsworldClient; readonly dir: string };
  let started = false;
  before(async function () {
    this.timeout(60_000);
    session.served = await start();
    started = true;
    session.client = createOsworldClient(session.served.url, { retries: 0 });
    assert.equal((await session.client.execute(['mkdir', '-p', session.dir])).returncode, 0);
  });
  after(async () => {
    if (!started) return;
    await session.client.execute(['rm', '-rf', session.dir]);
    await session.served.stop();
  });
  return session;
}

function contract(target: Target): void {
  describe(`OSWorld client against ${target.name}`, () => {
    /** The server, its client and a scratch folder on its machine, from the first test to the last. */
    const s = servedWithScratch(() => target.start(), 'coda-osworld-test');

    it('GET /platform answers Linux', async () => {
      assert.equal(await s.client.platform(), 'Linux');
    });

    it('GET /screenshot is a PNG of the size POST /screen_size reports', async () => {
      const png = await s.client.screenshot();
      const size = await s.client.screenSize();
      assert.deepEqual(pngSize(png), size);
      assert.ok(size.width >= 320 && size.height >= 240, `implausible screen ${JSON.stringify(size)}`);
    });

    it('POST /execute runs an argv list without a shell: metacharacters arrive as data', async () => {
      const marker = `${s.dir}/pwned`;
      const payload = `a'b"c; touch ${marker} $(touch ${marker}) \`touch ${marker}\` | cat && echo x\nnext line`;
      const result = await s.client.execute(['printf', '%s', payload]);
      assert.deepEqual(result, { output: payload, error: '', returncode: 0 });
      const check = await s.client.execute(['test', '-e', marker]);
      assert.equal(check.returncode, 1, 'the marker file must not exist');
    });

    it('POST /execute reports a failing command by its exit code and stderr', async () => {
      const result = await s.client.execute(['sh', '-c', 'echo partial; echo broken >&2; exit 3']);
      assert.deepEqual(result, { output: 'partial\n', error: 'broken\n', returncode: 3 });
    });

    it('POST /execute with shell: true goes through the shell', async () => {
      const result = await s.client.execute('echo $((6 * 7))', { shell: true });
      assert.equal(result.output, '42\n');
    });

    it('POST /execute of a missing program fails with the server, endpoint, status and reason', async () => {
      const err = await rejectsWith(s.client.execute(['/nonexistent/coda-binary']), VmHttpError);
      assert.equal(err.status, 500);
      assert.equal(err.failure, 'status');
      assert.match(err.message, /^POST \/execute on http:\/\/\S+: HTTP 500/);
      assert.ok(err.message.includes(s.client.url));
      assert.match(err.message, /nonexistent\/coda-binary/);
    });

    it('POST /write, /append and GET /read round-trip UTF-8 text', async () => {
      const path = `${s.dir}/notes é.txt`;
      await s.client.writeFile(path, 'a := vector{-1, root(3, 3)}\n');
      await s.client.appendFile(path, 'ß ∑ "quoted"\n');
      assert.equal(await s.client.readFile(path), 'a := vector{-1, root(3, 3)}\nß ∑ "quoted"\n');
      await s.client.writeFile(path, 'replaced');
      assert.equal(await s.client.readFile(path), 'replaced');
    });

    it('GET /read of a missing file fails naming the endpoint, the 500 and the exception, never the debugger page', async () => {
      const err = await rejectsWith(s.client.readFile(`${s.dir}/missing.txt`), VmHttpError);
      assert.equal(err.status, 500);
      assert.equal(err.endpoint, 'GET /read');
      assert.equal(err.message, `GET /read on ${s.client.url}: HTTP 500 INTERNAL SERVER ERROR: FileNotFoundError: [Errno 2] No such file or directory: '${s.dir}/missing.txt'`);
    });

    it('POST /setup/launch starts a command without waiting for it', async () => {
      const path = `${s.dir}/launched.txt`;
      const started = Date.now();
      await s.client.launch(['sh', '-c', `sleep 0.5; echo started > '${path}'`]);
      assert.ok(Date.now() - started < 500, 'launch must not wait for the command');
      let content = '';
      for (let i = 0; i < 50 && content === ''; i++) {
        await sleep(100);
        content = await s.client.readFile(path).catch(() => '');
      }
      assert.equal(content, 'started\n');
    });

    it('a pyautogui click sent through POST /execute moves the pointer that cursorPosition reads', async () => {
      const click = await s.client.execute(['python', '-c', 'import pyautogui; pyautogui.FAILSAFE = False; pyautogui.click(321, 123)']);
      assert.equal(click.returncode, 0, click.error);
      assert.deepEqual(await s.client.cursorPosition(), { x: 321, y: 123 });
      const move = await s.client.execute(['python', '-c', 'import pyautogui; pyautogui.moveTo(17, 9)']);
      assert.equal(move.returncode, 0, move.error);
      assert.deepEqual(await s.client.cursorPosition(), { x: 17, y: 9 });
    });

    it('GET /accessibility answers the AT-SPI tree as XML', async () => {
      const tree = await s.client.accessibilityTree();
      assert.match(tree, /^<desktop-frame[\s>]/);
    });

    it('answers an uncaught exception with a 500 debugger page: the exception line in the title, the secret in a script', async () => {
      const response = await fetch(`${s.client.url}/read?path=${encodeURIComponent(`${s.dir}/missing.txt`)}`);
      const page = await response.text();
      assert.equal(response.status, 500);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(titleOf(page), `FileNotFoundError: [Errno 2] No such file or directory: &#39;${s.dir}/missing.txt&#39;\n // Werkzeug Debugger`);
      assert.match(page, /<script>[^<]*SECRET = "\w+";/);
    });

    it('answers 405 with the allowed methods, in any order (Werkzeug\'s follows the hash seed), to a known route called with another', async () => {
      assert.deepEqual(new Set(await methodsOf405(s.client.url)), new Set(['POST', 'OPTIONS']));
    });

    it('answers 415 when a JSON route gets a body of another Content-Type', async () => {
      const response = await fetch(`${s.client.url}/execute`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"command": ["true"]}' });
      assert.equal(response.status, 415);
      assert.match(await response.text(), /<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application\/json&#39;.<\/p>/);
    });

    it('answers 400 to malformed JSON', async () => {
      const response = await fetch(`${s.client.url}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"command": [' });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /<p>Failed to decode JSON object: /);
    });

    it('POST /execute splits a string command like shlex when there is no shell', async () => {
      const result = await s.client.execute(`printf %s| 'a b' "c \\"d\\" \\\\" e\\ f '$HOME'`);
      assert.deepEqual(result, { output: 'a b|c "d" \\|e f|$HOME|', error: '', returncode: 0 });
    });

    it('POST /execute with shell: true runs only the first element of a list; the rest become $0, $1', async () => {
      const result = await s.client.execute(['echo run: "$0" "$1"', 'second', 'third'], { shell: true });
      assert.equal(result.output, 'run: second third\n');
    });

    it('POST /execute expands arguments that start with ~/ and no others', async () => {
      const home = (await s.client.execute(['sh', '-c', 'printf %s "$HOME"'])).output;
      const result = await s.client.execute(['printf', '%s|', '~/notes.txt', '~', 'a~/b', '~root/x']);
      assert.equal(result.output, `${home}/notes.txt|~|a~/b|~root/x|`);
    });

    it('POST /execute reads the output as text: \\r\\n and \\r become \\n', async () => {
      const result = await s.client.execute(['printf', 'a\\r\\nb\\rc\\n']);
      assert.equal(result.output, 'a\nb\nc\n');
    });

    it('POST /execute answers a 500 for output that is not UTF-8', async () => {
      const err = await rejectsWith(s.client.execute(['printf', '\\377']), VmHttpError);
      assert.equal(err.status, 500);
      assert.match(err.message, /'utf-8' codec can't decode byte 0xff in position 0: invalid start byte$/);
    });

    it('GET /read reads text mode: \\r\\n and \\r become \\n', async () => {
      const path = `${s.dir}/crlf.txt`;
      await s.client.writeFile(path, 'a\r\nb\rc\n');
      assert.equal((await s.client.execute(['od', '-An', '-c', path])).output.replace(/\s+/g, ''), 'a\\r\\nb\\rc\\n');
      assert.equal(await s.client.readFile(path), 'a\nb\nc\n');
    });

    it('POST /setup/launch answers a 500 for a program that cannot start, but 200 when a shell starts it', async () => {
      const err = await rejectsWith(s.client.launch(['/nonexistent/kalgebra', '8000']), VmHttpError);
      assert.equal(err.status, 500);
      assert.match(err.message, /\[Errno 2\] No such file or directory: '\/nonexistent\/kalgebra'$/);
      await s.client.launch('/nonexistent/kalgebra 8000', { shell: true });
    });

    it('closes the connection after each response', async () => {
      const { response, closed } = await exchange(s.client.url, 'GET /platform HTTP/1.1\r\nHost: vm\r\nConnection: keep-alive\r\n\r\n');
      assert.match(response, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(response, /\r\nConnection: close\r\n/i);
      assert.equal(closed, true, 'the server kept the connection open');
    });
  });
}

for (const target of TARGETS) contract(target);

/** A PNG's pixels as RGB bytes, decoded by sharp. */
async function rgbOf(png: Buffer): Promise<{ data: Buffer; width: number }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width };
}

/** The RGB bytes of the `size`-pixel square whose top-left corner is (x, y). */
function square(image: { data: Buffer; width: number }, x: number, y: number, size: number): Buffer {
  const rows = Array.from({ length: size }, (_, row) => {
    const at = ((y + row) * image.width + x) * 3;
    return image.data.subarray(at, at + size * 3);
  });
  return Buffer.concat(rows);
}

/**
 * What the project's server does that the contract does not ask, or does otherwise than
 * ScienceBoard's server (infra/vm-image/server/osworld_server.py's header lists how and why).
 */
describe("the project's in-VM server beyond the contract (infra/vm-image/server/osworld_server.py)", () => {
  /** The server, its client and a scratch folder on its machine, from the first test to the last. */
  const s = servedWithScratch(() => startProjectServer(), 'coda-vm-server-test');

  const pyautogui = async (code: string): Promise<void> => {
    const result = await s.client.execute(['python', '-c', `import pyautogui; ${code}`]);
    assert.equal(result.returncode, 0, result.error);
  };

  it('answers GET /cursor_position itself, with [x, y] (ScienceBoard\'s answers 500: OSWorld #117)', async () => {
    await pyautogui('pyautogui.moveTo(44, 55)');
    const response = await fetch(`${s.served.url}/cursor_position`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), [44, 55]);
  });

  it('draws the pointer into the screenshot where it is', async () => {
    await pyautogui('pyautogui.moveTo(200, 150)');
    const here = await rgbOf(await s.client.screenshot());
    await pyautogui('pyautogui.moveTo(900, 600)');
    const there = await rgbOf(await s.client.screenshot());
    // The pointer's picture starts at most its hotspot (under 32 pixels) above and left of it.
    assert.notDeepEqual(square(here, 170, 120, 40), square(there, 170, 120, 40), 'no pointer drawn at (200, 150)');
    assert.notDeepEqual(square(here, 870, 570, 40), square(there, 870, 570, 40), 'no pointer drawn at (900, 600)');
  });

  it('answers overlapping screenshots each with a complete PNG (no file shared between them)', async () => {
    const shots = await Promise.all(Array.from({ length: 6 }, () => fetch(`${s.served.url}/screenshot`).then(async (r) => Buffer.from(await r.arrayBuffer()))));
    for (const png of shots) {
      assert.deepEqual(pngSize(png), { width: 1280, height: 800 });
      assert.equal(png.subarray(-8, -4).toString('latin1'), 'IEND');
    }
  });

  it('saves a POST /setup/upload byte for byte at file_path, ~/ expanded, and serves it back from POST /file', async () => {
    const bytes = Buffer.from([0xff, 0x00, 0x0d, 0x0a, 0x0d, 0x41, 0xe9]);
    const name = `upload-${randomUUID()}.bin`;
    const upload = async (fields: Record<string, string | Blob>) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.set(key, value);
      return fetch(`${s.served.url}/setup/upload`, { method: 'POST', body: form });
    };
    const saved = await upload({ file_path: `~/${name}`, file_data: new Blob([bytes]) });
    assert.equal(saved.status, 200);
    assert.equal(await saved.text(), 'File Uploaded');
    const home = (await s.client.execute(['sh', '-c', 'printf %s "$HOME"'])).output;
    assert.equal((await s.client.execute(['od', '-An', '-tx1', `${home}/${name}`])).output.replace(/\s+/g, ''), 'ff000d0a0d41e9');
    const form = new FormData();
    form.set('file_path', `~/${name}`);
    const file = await fetch(`${s.served.url}/file`, { method: 'POST', body: form });
    assert.equal(file.status, 200);
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), bytes);
    const missing = await upload({ file_path: `${s.dir}/nothing` });
    assert.equal(missing.status, 400);
    assert.deepEqual(await missing.json(), { error: 'file_path and file_data are required' });
    await s.client.execute(['rm', '-f', `${home}/${name}`]);
  });

  it('reads an application\'s accessibility tree, as deep as POST /opt says', async function () {
    this.timeout(60_000);
    // Qt's accessibility on without a screen reader, and Chromium's sandbox off (the test may run as root), as temporal.yaml starts it.
    const qt = 'QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 QTWEBENGINE_DISABLE_SANDBOX=1 QT_QUICK_BACKEND=software';
    await s.client.launch(`echo $$ > ${s.dir}/kalgebra.pid; exec env ${qt} QTWEBENGINE_CHROMIUM_FLAGS=--disable-gpu kalgebra`, { shell: true });
    const opt = async (depth: number) => {
      const response = await fetch(`${s.served.url}/opt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ depth }) });
      assert.equal(await response.text(), 'OK');
    };
    try {
      const tree = await waitFor(
        async () => {
          const xml = await s.client.accessibilityTree();
          return /<application name="kalgebra"[^>]*>[\s\S]*<page-tab name="2D Graph"/.test(xml) ? xml : undefined;
        },
        40_000,
        () => "KAlgebra's tabs never reached the accessibility tree",
        250,
      );
      assert.match(tree, /^<desktop-frame xmlns:\w+="https:\/\/accessibility\.ubuntu\.example\.org\/ns\/\w+"/);
      assert.match(tree, /<frame name="[^"]*"[^>]* st:showing="true"[^>]* cp:screencoord="\(\d+, \d+\)" cp:size="\(1280, 800\)"/);
      await opt(1);
      assert.match(await s.client.accessibilityTree(), /^<desktop-frame[^>]*><application name="kalgebra"[^>]*\/><\/desktop-frame>$/);
    } finally {
      await opt(50);
      const pid = await s.client.readFile(`${s.dir}/kalgebra.pid`).catch(() => '');
      if (/^\d+\n$/.test(pid)) await s.client.execute(['kill', pid.trim()]);
    }
  });

  it('compiles a document by POST /tex/check, and fails one that has an error without waiting for a terminal', async function () {
    this.timeout(60_000);
    await s.client.writeFile(`${s.dir}/good.tex`, '\\documentclass{article}\\begin{document}Hello\\end{document}\n');
    await s.client.writeFile(`${s.dir}/bad.tex`, '\\documentclass{article}\\begin{document}\\undefinedcommand\\end{document}\n');
    assert.equal(await s.client.texCheck(s.dir, 'good', false), true);
    assert.equal(await s.client.texCheck(s.dir, 'bad', false), false);
    assert.equal((await s.client.execute(['test', '-s', `${s.dir}/good.pdf`])).returncode, 0);
  });

  it('asks ChimeraX\'s REST server for POST /chimerax/run, and answers 500 when none listens', async () => {
    const asked: string[] = [];
    // TEST DOUBLE of ChimeraX's REST server (`remotecontrol rest start json true`), which no registry
    // here has: its JSON answer as apps/chimerax/vm.ts reads it, `error` null when the command ran.
    const chimerax = createServer((req, res) => {
      const command = new URL(req.url ?? '/', 'http://chimerax').searchParams.get('command') ?? '';
      asked.push(command);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: command.startsWith('open') ? null : { type: 'UserError', message: `Unknown command: ${command}` } }));
    });
    const port = await listenLocally(chimerax);
    try {
      assert.equal(await s.client.chimeraxRun('open 1abc', port), null);
      assert.equal(await s.client.chimeraxRun('frobnicate', port), 'Unknown command: frobnicate');
      assert.deepEqual(asked, ['open 1abc', 'frobnicate']);
    } finally {
      await new Promise<void>((resolve) => chimerax.close(() => resolve()));
    }
    const err = await rejectsWith(s.client.chimeraxRun('open 1abc', port), VmHttpError);
    assert.equal(err.status, 500);
    assert.match(err.message, /Connection refused/);
  });

  it('serves the debugger page without its console, the exception line escaped in the title', async () => {
    const response = await fetch(`${s.served.url}/read?path=${encodeURIComponent(`${s.dir}/<b>x</b>`)}`);
    const page = await response.text();
    assert.equal(response.status, 500);
    assert.equal(titleOf(page), `FileNotFoundError: [Errno 2] No such file or directory: &#39;${s.dir}/&lt;b&gt;x&lt;/b&gt;&#39;\n // Werkzeug Debugger`);
    assert.match(page, /EVALEX = false,/);
    assert.equal((await fetch(`${s.served.url}/console`)).status, 404);
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

  it('takes a 405\'s Allow in either order, as the real server sends it after different starts (its hash seed)', async () => {
    const reversed = await startOsworldServerDouble({ allowOrder: 'reversed' });
    try {
      assert.deepEqual(await methodsOf405(reversed.url), ['OPTIONS', 'POST']);
      assert.deepEqual(new Set(await methodsOf405(reversed.url)), new Set(['POST', 'OPTIONS']));
    } finally {
      await reversed.close();
    }
  });

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
