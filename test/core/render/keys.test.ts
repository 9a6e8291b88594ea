import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { keyName, keyNames, RenderError } from '../../../core/render/keys';

/** pyautogui's KEY_NAMES (asweigart/pyautogui, pyautogui/__init__.py at b4255d0): every name its hotkey() knows. */
const PYAUTOGUI_KEY_NAMES = [
  '\t', '\n', '\r', ' ', '!', '"', '#', '$', '%', '&', "'", '(', ')', '*', '+', ',', '-', '.', '/',
  ...'0123456789', ':', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '^', '_', '`', ...'abcdefghijklmnopqrstuvwxyz', '{', '|', '}', '~',
  'accept', 'add', 'alt', 'altleft', 'altright', 'apps', 'backspace', 'browserback', 'browserfavorites', 'browserforward',
  'browserhome', 'browserrefresh', 'browsersearch', 'browserstop', 'capslock', 'clear', 'convert', 'ctrl', 'ctrlleft',
  'ctrlright', 'decimal', 'del', 'delete', 'divide', 'down', 'end', 'enter', 'esc', 'escape', 'execute',
  ...Array.from({ length: 24 }, (_, i) => `f${i + 1}`),
  'final', 'fn', 'hanguel', 'hangul', 'hanja', 'help', 'home', 'insert', 'junja', 'kana', 'kanji', 'launchapp1', 'launchapp2',
  'launchmail', 'launchmediaselect', 'left', 'modechange', 'multiply', 'nexttrack', 'nonconvert',
  ...Array.from({ length: 10 }, (_, i) => `num${i}`),
  'numlock', 'pagedown', 'pageup', 'pause', 'pgdn', 'pgup', 'playpause', 'prevtrack', 'print', 'printscreen', 'prntscrn',
  'prtsc', 'prtscr', 'return', 'right', 'scrolllock', 'select', 'separator', 'shift', 'shiftleft', 'shiftright', 'sleep',
  'space', 'stop', 'subtract', 'tab', 'up', 'volumedown', 'volumemute', 'volumeup', 'win', 'winleft', 'winright', 'yen',
  'command', 'option', 'optionleft', 'optionright',
];

/** Mac names: pyautogui's X11 backend ignores them, so they press their Linux counterparts. */
const MAC_NAMES: Record<string, string> = { command: 'win', option: 'alt', optionleft: 'altleft', optionright: 'altright' };

/** IME keys of Windows with no X keysym: pyautogui's X11 backend ignores them too. */
const NO_KEYSYM = ['accept', 'final'];

describe('key names', () => {
  it('maps model key names to X keysyms and pyautogui names', () => {
    assert.equal(keyName('ctrl', 'x11'), 'ctrl');
    assert.equal(keyName('Control', 'x11'), 'ctrl');
    assert.equal(keyName('enter', 'x11'), 'Return');
    assert.equal(keyName('return', 'pyautogui'), 'return');
    assert.equal(keyName('win', 'x11'), 'super');
    assert.equal(keyName('super', 'pyautogui'), 'win');
    assert.equal(keyName('pageup', 'x11'), 'Prior');
    assert.equal(keyName('arrowleft', 'pyautogui'), 'left');
    assert.equal(keyName('Command', 'pyautogui'), 'win');
  });

  it('knows letters, digits, function keys and punctuation', () => {
    assert.equal(keyName('A', 'x11'), 'a');
    assert.equal(keyName('7', 'pyautogui'), '7');
    assert.equal(keyName('f5', 'x11'), 'F5');
    assert.equal(keyName('F12', 'pyautogui'), 'f12');
    assert.equal(keyName('+', 'x11'), 'plus');
    assert.equal(keyName('+', 'pyautogui'), '+');
    assert.equal(keyName("'", 'x11'), 'apostrophe');
  });

  it('knows every key name pyautogui knows, for pyautogui as itself', () => {
    for (const name of PYAUTOGUI_KEY_NAMES) assert.equal(keyName(name, 'pyautogui'), MAC_NAMES[name] ?? name, JSON.stringify(name));
    assert.equal(keyName('pgdn', 'x11'), 'Next');
    assert.equal(keyName('F13', 'x11'), 'F13');
    assert.equal(keyName('prtsc', 'x11'), 'Print');
    assert.equal(keyName('numlock', 'x11'), 'Num_Lock');
    assert.equal(keyName('volumeup', 'x11'), 'XF86AudioRaiseVolume');
    assert.equal(keyName('num5', 'x11'), 'KP_5');
    assert.equal(keyName('~', 'x11'), 'asciitilde');
  });

  it('names a real X keysym for every key but the IME keys X has none for', () => {
    const names = PYAUTOGUI_KEY_NAMES.filter((name) => !NO_KEYSYM.includes(name)).map((name) => keyName(name, 'x11'));
    assert.ok(names.every((name) => name !== undefined));
    // Asked of libX11 itself (installed with the desktops), as xdotool asks it: 0 is NoSymbol.
    const script = [
      'import ctypes, ctypes.util, json, sys',
      "x = ctypes.cdll.LoadLibrary(ctypes.util.find_library('X11'))",
      'x.XStringToKeysym.restype = ctypes.c_ulong',
      'print(json.dumps([n for n in json.loads(sys.argv[1]) if x.XStringToKeysym(n.encode()) == 0]))',
    ].join('\n');
    // xdotool's own modifier aliases are not keysyms.
    const keysyms = [...new Set(names as string[])].filter((name) => !['ctrl', 'alt', 'shift', 'super'].includes(name));
    assert.deepEqual(JSON.parse(execFileSync('python3', ['-c', script, JSON.stringify(keysyms)], { encoding: 'utf8' })), []);
    for (const name of NO_KEYSYM) {
      assert.equal(keyName(name, 'x11'), undefined, name);
      assert.throws(() => keyNames([name], 'x11'), (error: unknown) => error instanceof RenderError && /has no X keysym/.test(error.message));
    }
  });

  it('refuses anything else', () => {
    for (const key of ['f25', 'ctrl+c', 'x; rm -rf /', '$(touch /tmp/x)', '', 'é', 'aa', 'hyper', 'constructor', '__proto__']) {
      assert.equal(keyName(key, 'x11'), undefined, key);
      assert.equal(keyName(key, 'pyautogui'), undefined, key);
    }
    assert.throws(() => keyNames(['ctrl', 'hyper'], 'pyautogui'), /unknown key "hyper"/);
  });
});
