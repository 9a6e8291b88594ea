import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { toInputEvents } from '../../../core/render/input-events';
import { keyName, keyNames } from '../../../core/render/keys';

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

/**
 * The keysym pyautogui's X11 backend presses for each name (pyautogui/_pyautogui_x11.py at b4255d0,
 * its keyboardMapping): letters and digits press themselves; a name of KEY_NAMES missing here it
 * maps to None, and presses nothing.
 */
const X11_BACKEND: Record<string, string> = {
  backspace: 'BackSpace', tab: 'Tab', enter: 'Return', return: 'Return', shift: 'Shift_L', ctrl: 'Control_L', alt: 'Alt_L',
  pause: 'Pause', capslock: 'Caps_Lock', esc: 'Escape', escape: 'Escape', pgup: 'Page_Up', pgdn: 'Page_Down', pageup: 'Page_Up',
  pagedown: 'Page_Down', end: 'End', home: 'Home', left: 'Left', up: 'Up', right: 'Right', down: 'Down', select: 'Select',
  print: 'Print', execute: 'Execute', prtsc: 'Print', prtscr: 'Print', prntscrn: 'Print', printscreen: 'Print', insert: 'Insert',
  del: 'Delete', delete: 'Delete', help: 'Help', win: 'Super_L', winleft: 'Super_L', winright: 'Super_R', apps: 'Menu',
  ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`num${i}`, `KP_${i}`])),
  multiply: 'KP_Multiply', add: 'KP_Add', separator: 'KP_Separator', subtract: 'KP_Subtract', decimal: 'KP_Decimal', divide: 'KP_Divide',
  ...Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`f${i + 1}`, `F${i + 1}`])),
  numlock: 'Num_Lock', scrolllock: 'Scroll_Lock', shiftleft: 'Shift_L', shiftright: 'Shift_R', ctrlleft: 'Control_L',
  ctrlright: 'Control_R', altleft: 'Alt_L', altright: 'Alt_R', space: 'space',
  ' ': 'space', '\t': 'Tab', '\n': 'Return', '\r': 'Return', '!': 'exclam', '#': 'numbersign', '%': 'percent', $: 'dollar',
  '&': 'ampersand', '"': 'quotedbl', "'": 'apostrophe', '(': 'parenleft', ')': 'parenright', '*': 'asterisk', '=': 'equal',
  '+': 'plus', ',': 'comma', '-': 'minus', '.': 'period', '/': 'slash', ':': 'colon', ';': 'semicolon', '<': 'less',
  '>': 'greater', '?': 'question', '@': 'at', '[': 'bracketleft', ']': 'bracketright', '\\': 'backslash', '^': 'asciicircum',
  _: 'underscore', '`': 'grave', '{': 'braceleft', '|': 'bar', '}': 'braceright', '~': 'asciitilde',
  ...Object.fromEntries([...'abcdefghijklmnopqrstuvwxyz0123456789'].map((c) => [c, c])),
};

/** Spellings models use that pyautogui does not know, and the pyautogui name each stands for. */
const ALIASES: Record<string, string> = {
  control: 'ctrl', super: 'win', meta: 'win', cmd: 'win', arrowup: 'up', arrowdown: 'down', arrowleft: 'left', arrowright: 'right',
  control_l: 'ctrlleft', control_r: 'ctrlright', ctrl_l: 'ctrlleft', ctrl_r: 'ctrlright', shift_l: 'shiftleft', shift_r: 'shiftright',
  alt_l: 'altleft', alt_r: 'altright', super_l: 'winleft', super_r: 'winright',
};

/** Mac names: pyautogui's X11 backend ignores them, so they press their Linux counterparts. */
const MAC_NAMES: Record<string, string> = { command: 'win', option: 'alt', optionleft: 'altleft', optionright: 'altright' };

/** xdotool's own modifier names, which are not keysyms: what it presses for them. */
const XDOTOOL_ALIASES: Record<string, string> = { ctrl: 'Control_L', alt: 'Alt_L', shift: 'Shift_L', super: 'Super_L' };

/** Pairs of keysym names whose keysyms differ, asked of libX11 itself (installed with the desktops), as xdotool asks it. */
function differentKeysyms(pairs: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  const script = [
    'import ctypes, ctypes.util, json, sys',
    "x = ctypes.cdll.LoadLibrary(ctypes.util.find_library('X11'))",
    'x.XStringToKeysym.restype = ctypes.c_ulong',
    'k = lambda n: x.XStringToKeysym(n.encode())',
    'print(json.dumps([p for p in json.loads(sys.argv[1]) if k(p[0]) == 0 or k(p[0]) != k(p[1])]))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script, JSON.stringify(pairs)], { encoding: 'utf8' })) as Array<[string, string]>;
}

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
    assert.equal(keyName('num5', 'x11'), 'KP_5');
    assert.equal(keyName('~', 'x11'), 'asciitilde');
  });

  it('presses, on a local desktop, what the VM\'s pyautogui presses for every name it is sent: the same keysym, or nothing', () => {
    const pairs: Array<[string, string]> = [];
    for (const name of [...PYAUTOGUI_KEY_NAMES, ...Object.keys(ALIASES)]) {
      const sent = keyName(name, 'pyautogui') as string;
      const pressed = X11_BACKEND[sent];
      const keysym = keyName(name, 'x11');
      if (pressed === undefined) {
        assert.equal(keysym, undefined, `${JSON.stringify(name)} presses nothing on the VM`);
        assert.deepEqual(toInputEvents({ type: 'hotkey', keys: [name] }), [], name);
      } else {
        assert.ok(keysym !== undefined, `${JSON.stringify(name)} presses ${pressed} on the VM`);
        pairs.push([XDOTOOL_ALIASES[keysym] ?? keysym, pressed]);
      }
    }
    assert.deepEqual(differentKeysyms(pairs), []);
    assert.deepEqual(toInputEvents({ type: 'hotkey', keys: ['fn', 'f5'] }), [{ kind: 'key', chord: 'F5' }]);
  });

  it('reads the X keysym names of the left and right modifiers as pyautogui\'s left and right keys', () => {
    for (const [alias, name] of Object.entries(ALIASES).filter(([alias]) => alias.includes('_'))) assert.equal(keyName(alias, 'pyautogui'), name, alias);
    assert.deepEqual(toInputEvents({ type: 'hotkey', keys: ['ctrl_l', 'c'] }), [{ kind: 'key', chord: 'Control_L+c' }]);
    assert.deepEqual(keyNames(['Shift_R', 'tab'], 'pyautogui'), ['shiftright', 'tab']);
  });

  it('refuses anything else', () => {
    for (const key of ['f25', 'ctrl+c', 'x; rm -rf /', '$(touch /tmp/x)', '', 'é', 'aa', 'hyper', 'constructor', '__proto__']) {
      assert.equal(keyName(key, 'x11'), undefined, key);
      assert.equal(keyName(key, 'pyautogui'), undefined, key);
    }
    assert.throws(() => keyNames(['ctrl', 'hyper'], 'pyautogui'), /unknown key "hyper"/);
  });
});
