import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GuiAction } from '../../../core/actions';
import { RenderError } from '../../../core/render/input-events';
import { pyautoguiCommand, pythonString, toPyautogui } from '../../../core/render/pyautogui';

/** TEST DOUBLES of the VM's pyautogui and pyperclip (not installed here): they only record their calls, one JSON line each. */
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

describe('pyautogui rendering (OSWorld VMs)', function () {
  // Each case starts a real python3 (and the clipboard path sleeps 0.3 s, as it would on a VM).
  this.timeout(30_000);
  let dir: string;
  let marker: string;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'coda-pyautogui-'));
    marker = path.join(dir, 'pwned');
    writeFileSync(path.join(dir, 'pyautogui.py'), `PREFIX = ''\n${STUB}`);
    writeFileSync(path.join(dir, 'pyperclip.py'), `PREFIX = 'pyperclip.'\n${STUB}`);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the command the VM would run, against the stubs; returns the recorded calls. */
  function run(action: GuiAction): unknown[] {
    const log = path.join(dir, 'calls.jsonl');
    rmSync(log, { force: true });
    const { command } = pyautoguiCommand(toPyautogui(action));
    execFileSync(command[0] as string, command.slice(1), { env: { ...process.env, PYTHONPATH: dir, STUB_LOG: log } });
    return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown) : [];
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
      [{ type: 'type', text: 'é', submit: false }, "import pyperclip; pyperclip.copy('\\xe9'); pyautogui.hotkey('ctrl', 'v'); time.sleep(0.3)"],
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
      const calls = run({ type: 'type', text, submit: true });
      const typed = /^[\x20-\x7e\n\t]*$/.test(text)
        ? [['write', [text], { interval: 0.02 }]]
        : [['pyperclip.copy', [text], {}], ['hotkey', ['ctrl', 'v'], {}]];
      assert.deepEqual(calls, [...typed, ['press', ['enter'], {}]], JSON.stringify(text));
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

  it('runs clicks, drags, scrolls and hotkeys as the stubbed calls', () => {
    assert.deepEqual(run({ type: 'click', x: 640, y: 400 }), [['click', [640, 400], {}]]);
    assert.deepEqual(run({ type: 'hover', x: 7, y: 8 }), [['moveTo', [7, 8], {}]]);
    assert.deepEqual(run({ type: 'drag', from: { x: 1, y: 2 }, to: { x: 3, y: 4 } }), [
      ['moveTo', [1, 2], {}],
      ['dragTo', [3, 4], { duration: 0.5, button: 'left' }],
    ]);
    assert.deepEqual(run({ type: 'scroll', x: 5, y: 6, direction: 'left', amount: 2 }), [['hscroll', [-2], { x: 5, y: 6 }]]);
    assert.deepEqual(run({ type: 'hotkey', keys: ['ctrl', 'shift', 't'] }), [['hotkey', ['ctrl', 'shift', 't'], {}]]);
    assert.deepEqual(run({ type: 'answer', text: '$(touch x)' }), []);
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
