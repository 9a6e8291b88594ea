import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GuiAction } from '../../../core/actions';
import { RenderError } from '../../../core/render/input-events';
import { pyautoguiCommand, pythonString, toPyautogui } from '../../../core/render/pyautogui';

/** TEST DOUBLE of the VM's pyautogui (not installed here): it only records its calls, one JSON line each. */
const STUB = `
import json, os
def _record(name):
    def call(*args, **kwargs):
        with open(os.environ['STUB_LOG'], 'a') as log:
            log.write(json.dumps([name, list(args), kwargs]) + '\\n')
    return call
def __getattr__(name):
    return _record(PREFIX + name)
`;

/**
 * TEST DOUBLES of the VM's clipboard tools (neither is installed here), with the stdio behaviour
 * that matters: both record their arguments and the text they read; xclip then leaves a child in
 * the background that keeps serving the selection with the caller's stdout and stderr still open,
 * as the real xclip does, while xsel's background child detaches from them, as the real xsel does.
 */
const clipboardTool = (detached: boolean): string => `#!/bin/sh
printf '%s' "$*" > "$CLIP_LOG.args"
/bin/cat > "$CLIP_LOG.text"
/bin/sleep 600 ${detached ? '</dev/null >/dev/null 2>&1 ' : ''}&
printf '%s' $! > "$CLIP_LOG.pid"
`;

/** Runs a command as the in-VM server's /execute does (subprocess.run with piped output and a timeout), in Python. */
const SERVER_RUN = `
import json, subprocess, sys
try:
    done = subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=float(sys.argv[2]))
    print(json.dumps({'returncode': done.returncode, 'error': done.stderr}))
except subprocess.TimeoutExpired:
    print(json.dumps({'timedOut': True}))
`;

describe('pyautogui rendering (OSWorld VMs)', function () {
  // Each case starts a real python3 (and the clipboard path sleeps 0.3 s, as it would on a VM), one
  // case a python3 per payload: about 3 s at rest, over 30 s at a load of 20 (2026-11-27), so the
  // cases get the suite's own limit.
  this.timeout(120_000);
  /** The server waits up to this long for a command's output pipes to close (its own limit is 120 s). */
  const SERVER_TIMEOUT_S = 20;
  const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)']).toString().trim();
  let dir: string;
  let marker: string;
  /** Clipboard stand-ins' background children, killed after each test. */
  const holders: number[] = [];

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-pyautogui-'));
    marker = path.join(dir, 'pwned');
    writeFileSync(path.join(dir, 'pyautogui.py'), `PREFIX = ''\n${STUB}`);
  });

  afterEach(() => {
    for (const pid of holders.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  type Tool = 'xclip' | 'xsel';

  /**
   * Runs the command the VM would run, as its server runs it, against the pyautogui stand-in and
   * a PATH holding only python3 and the given clipboard tools; returns what happened.
   */
  function run(action: GuiAction, tools: readonly Tool[] = ['xsel']) {
    const bin = mkdtempSync(path.join(dir, 'bin-'));
    symlinkSync(python, path.join(bin, 'python3'));
    for (const tool of tools) {
      writeFileSync(path.join(bin, tool), clipboardTool(tool === 'xsel'));
      chmodSync(path.join(bin, tool), 0o755);
    }
    const calls = path.join(bin, 'calls.jsonl');
    const clip = path.join(bin, 'clip');
    const { command } = pyautoguiCommand(toPyautogui(action));
    const env = { PATH: bin, PYTHONPATH: dir, STUB_LOG: calls, CLIP_LOG: clip, HOME: dir };
    const ran = JSON.parse(execFileSync(python, ['-c', SERVER_RUN, JSON.stringify(command), String(SERVER_TIMEOUT_S)], { env }).toString()) as {
      timedOut?: boolean;
      returncode?: number;
      error?: string;
    };
    const read = (file: string): string | undefined => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
    const holder = Number(read(`${clip}.pid`) ?? 0);
    if (holder > 0) holders.push(holder);
    return {
      ...ran,
      calls: (read(calls) ?? '').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown),
      /** What the clipboard tool was run with and read. */
      clipboard: { args: read(`${clip}.args`), text: read(`${clip}.text`) },
      holder,
    };
  }

  const payloads = (): string[] => [
    "it's",
    'say "hi"',
    'back\\slash \\n not a newline',
    'line 1\nline 2\r\n\ttabbed',
    "'); import os; os.system('touch " + marker + "'); ('",
    "'''; import os; os.system('touch " + marker + "') #",
    '$(touch ' + marker + ')',
    '`touch ' + marker + '`',
    '"; touch ' + marker + '; echo "',
    '\\x27); __import__("os").system("touch ' + marker + '") #',
    'p := √3 · π ✓ 😀 é',
    '\u0000\u0007\u001b[31m\u007f\u2028\u2029',
    '',
  ];

  it('writes each action as pyautogui statements', () => {
    const cases: Array<[GuiAction, string]> = [
      [{ type: 'click', x: 640, y: 400 }, 'pyautogui.click(640, 400)'],
      [{ type: 'double_click', x: 1, y: 2 }, 'pyautogui.doubleClick(1, 2)'],
      [{ type: 'right_click', x: 1, y: 2 }, 'pyautogui.rightClick(1, 2)'],
      [{ type: 'hover', x: 1, y: 2 }, 'pyautogui.moveTo(1, 2)'],
      [{ type: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } }, "pyautogui.moveTo(1, 2); pyautogui.dragTo(3, 4, duration=0.5, button='left')"],
      [{ type: 'scroll', x: 5, y: 6, direction: 'up', amount: 3 }, 'pyautogui.scroll(3, x=5, y=6)'],
      [{ type: 'scroll', x: 5, y: 6, direction: 'down', amount: 3 }, 'pyautogui.scroll(-3, x=5, y=6)'],
      [{ type: 'scroll', x: 5, y: 6, direction: 'left', amount: 2 }, 'pyautogui.hscroll(-2, x=5, y=6)'],
      [{ type: 'scroll', x: 5, y: 6, direction: 'right', amount: 2 }, 'pyautogui.hscroll(2, x=5, y=6)'],
      [{ type: 'type', text: 'p := 2', submit: true }, "pyautogui.write('p := 2', interval=0.02); pyautogui.press('enter')"],
      [
        { type: 'type', text: 'é', submit: false },
        'import shutil, subprocess, sys; ' +
          "clip = next((argv for argv in (['xsel', '--clipboard', '--input'], ['xclip', '-selection', 'clipboard']) if shutil.which(argv[0])), None) " +
          "or sys.exit('no xsel or xclip in the VM: non-ASCII text is typed through the clipboard'); " +
          "subprocess.run(clip, input='\\xe9'.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=10); " +
          "pyautogui.hotkey('ctrl', 'v'); time.sleep(0.3)",
      ],
      [{ type: 'type', text: '', submit: true }, "pyautogui.press('enter')"],
      [{ type: 'type', text: '', submit: false }, 'pass'],
      [{ type: 'hotkey', keys: ['Control', 'return'] }, "pyautogui.hotkey('ctrl', 'return')"],
      [{ type: 'hotkey', keys: ['ctrl', "'"] }, "pyautogui.hotkey('ctrl', '\\'')"],
      [{ type: 'wait', seconds: 1.5 }, 'time.sleep(1.5)'],
      [{ type: 'done' }, 'pass'],
      [{ type: 'fail' }, 'pass'],
      [{ type: 'answer', text: "'); os.system('x')" }, 'pass'],
      [{ type: 'call_user' }, 'pass'],
    ];
    for (const [action, code] of cases) assert.equal(toPyautogui(action), code, JSON.stringify(action));
  });

  it('wraps code as an argv list for /execute, never a shell string', () => {
    assert.deepEqual(pyautoguiCommand('pyautogui.click(1, 2)'), {
      command: ['python3', '-c', 'import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(1, 2)'],
    });
  });

  it('makes one-line ASCII string literals that Python reads back as the exact text', () => {
    const texts = payloads();
    const literals = texts.map(pythonString);
    for (const literal of literals) assert.match(literal, /^'[\x20-\x7e]*'$/);
    const check = "import ast, json, sys\npairs = json.load(sys.stdin)\nprint(json.dumps([ast.literal_eval(lit) == text for lit, text in pairs]))";
    const input = JSON.stringify(literals.map((literal, i) => [literal, texts[i]]));
    assert.deepEqual(JSON.parse(execFileSync('python3', ['-c', check], { input }).toString()), texts.map(() => true));
    assert.equal(pythonString("a'b\\c\n"), "'a\\'b\\\\c\\n'");
    assert.equal(pythonString('😀'), "'\\U0001f600'");
  });

  it('types model text verbatim and runs none of it', () => {
    for (const text of payloads().filter((t) => t !== '')) {
      const ran = run({ type: 'type', text, submit: true });
      const ascii = /^[\x20-\x7e\n\t]*$/.test(text);
      const typed = ascii ? [['write', [text], { interval: 0.02 }]] : [['hotkey', ['ctrl', 'v'], {}]];
      assert.deepEqual(ran.calls, [...typed, ['press', ['enter'], {}]], JSON.stringify(text));
      assert.equal(ran.clipboard.text, ascii ? undefined : text);
    }
    assert.equal(existsSync(marker), false, 'a payload ran');
  });

  it('would notice an injection (control: naive quoting runs the payload)', () => {
    const payload = "'); import os; os.system('touch " + marker + "'); ('";
    const { command } = pyautoguiCommand(`pyautogui.write('${payload}')`);
    execFileSync(command[0] as string, command.slice(1), { env: { ...process.env, PYTHONPATH: dir, STUB_LOG: path.join(dir, 'control.jsonl') } });
    assert.equal(existsSync(marker), true);
    rmSync(marker);
  });

  it("scrolls where the pointer is for a scroll without a point: pyautogui's scroll without x and y, as UI-TARS's conversion writes it", () => {
    assert.equal(toPyautogui({ type: 'scroll', direction: 'down', amount: 5 }), 'pyautogui.scroll(-5)');
    assert.equal(toPyautogui({ type: 'scroll', direction: 'right', amount: 2 }), 'pyautogui.hscroll(2)');
    assert.deepEqual(run({ type: 'scroll', direction: 'up', amount: 5 }).calls, [['scroll', [5], {}]]);
  });

  it('runs clicks, drags, scrolls and hotkeys as the stubbed calls', () => {
    assert.deepEqual(run({ type: 'click', x: 640, y: 400 }).calls, [['click', [640, 400], {}]]);
    assert.deepEqual(run({ type: 'hover', x: 7, y: 8 }).calls, [['moveTo', [7, 8], {}]]);
    assert.deepEqual(run({ type: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } }).calls, [
      ['moveTo', [1, 2], {}],
      ['dragTo', [3, 4], { duration: 0.5, button: 'left' }],
    ]);
    assert.deepEqual(run({ type: 'scroll', x: 5, y: 6, direction: 'left', amount: 2 }).calls, [['hscroll', [-2], { x: 5, y: 6 }]]);
    assert.deepEqual(run({ type: 'hotkey', keys: ['ctrl', 'shift', 't'] }).calls, [['hotkey', ['ctrl', 'shift', 't'], {}]]);
    assert.deepEqual(run({ type: 'answer', text: '$(touch x)' }).calls, []);
  });

  describe('non-ASCII text through the clipboard, run as the server runs it', function () {
    this.timeout(SERVER_TIMEOUT_S * 1000 + 30_000);
    const type = (text: string, tools: readonly Tool[]) => run({ type: 'type', text, submit: true }, tools);

    const text = 'x := √2 · π ✓ é';
    const pasted = [['hotkey', ['ctrl', 'v'], {}], ['press', ['enter'], {}]];

    it('with xclip, which stays in the background: answers at once, the text pasted, xclip\'s output detached', () => {
      const ran = type(text, ['xclip']);
      assert.equal(ran.timedOut, undefined, 'the server was still waiting for the output pipes when its timeout struck');
      assert.deepEqual([ran.returncode, ran.error], [0, '']);
      assert.deepEqual(ran.clipboard, { args: '-selection clipboard', text });
      assert.deepEqual(ran.calls, pasted);
      // The stand-in's child still serves the selection, holding nothing of the server's.
      assert.equal(readlinkSync(`/proc/${ran.holder}/fd/1`), '/dev/null');
      assert.equal(readlinkSync(`/proc/${ran.holder}/fd/2`), '/dev/null');
    });

    it('with xsel: answers at once, the text pasted', () => {
      const ran = type(text, ['xsel']);
      assert.equal(ran.timedOut, undefined);
      assert.deepEqual([ran.returncode, ran.clipboard], [0, { args: '--clipboard --input', text }]);
      assert.deepEqual(ran.calls, pasted);
    });

    it('prefers xsel when both are there', () => {
      const ran = type(text, ['xclip', 'xsel']);
      assert.deepEqual([ran.returncode, ran.clipboard.args], [0, '--clipboard --input']);
    });

    it('with neither: fails saying so, and pastes nothing', () => {
      const ran = type(text, []);
      assert.equal(ran.returncode, 1);
      assert.match(ran.error ?? '', /no xsel or xclip in the VM/);
      assert.deepEqual(ran.calls, []);
    });
  });

  it('refuses unknown keys and values that are not numbers', () => {
    assert.throws(() => toPyautogui({ type: 'hotkey', keys: ['ctrl', "c'); import os; ('"] }), RenderError);
    const smuggled = { type: 'click', x: "1); __import__('os').system('x'); (", y: 2 } as unknown as GuiAction;
    assert.throws(() => toPyautogui(smuggled), /x must be a non-negative integer/);
    assert.throws(() => toPyautogui({ type: 'click', x: 1.5, y: 2 }), RenderError);
    assert.throws(() => toPyautogui({ type: 'scroll', x: 1, y: 2, direction: 'up', amount: -1 }), /scroll amount/);
    assert.throws(() => toPyautogui({ type: 'wait', seconds: Number.NaN }), /wait must be/);
  });
});
