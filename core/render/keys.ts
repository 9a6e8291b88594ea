/**
 * Key names as models write them (UI-TARS: `hotkey(key='ctrl c')`, lower case) mapped to the X
 * keysyms xdotool presses and to the names pyautogui knows. The table holds every name of
 * pyautogui's KEY_NAMES (alias KEYBOARD_KEYS; asweigart/pyautogui, pyautogui/__init__.py, read at b4255d0), each with
 * the keysym its X11 backend (pyautogui/_pyautogui_x11.py) presses for it, so a local desktop
 * presses what an OSWorld VM's pyautogui presses; plus the spellings models add (control, super,
 * arrowleft, ctrl_l...). A key outside it is refused, so a model can never smuggle an arbitrary
 * string into either renderer.
 */

interface Key {
  /** The keysym xdotool presses; absent for the names pyautogui's X11 backend presses nothing for. */
  readonly x11?: string;
  readonly pyautogui: string;
}

/**
 * Names pyautogui knows but its X11 backend has no keycode for (browser, media and IME keys, fn,
 * sleep, yen...): on a VM it presses nothing for them, and neither does a local desktop (xdotool
 * could press most, and the two desktops would then act differently).
 */
const PRESSES_NOTHING = new Set([
  'accept', 'final', 'clear', 'fn', 'sleep', 'stop', 'yen',
  'browserback', 'browserfavorites', 'browserforward', 'browserhome', 'browserrefresh', 'browsersearch', 'browserstop',
  'launchapp1', 'launchapp2', 'launchmail', 'launchmediaselect',
  'nexttrack', 'playpause', 'prevtrack', 'volumedown', 'volumemute', 'volumeup',
  'convert', 'nonconvert', 'modechange', 'hangul', 'hanguel', 'hanja', 'junja', 'kana', 'kanji',
]);

/** Named keys; a value that is a string is a pyautogui name whose keysym follows the string. */
const NAMED: Record<string, string | Key> = {
  ctrl: 'ctrl',
  ctrlleft: 'Control_L',
  ctrlright: 'Control_R',
  alt: 'alt',
  altleft: 'Alt_L',
  altright: 'Alt_R',
  shift: 'shift',
  shiftleft: 'Shift_L',
  shiftright: 'Shift_R',
  win: 'super',
  winleft: 'Super_L',
  winright: 'Super_R',
  apps: 'Menu',
  enter: 'Return',
  return: 'Return',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  backspace: 'BackSpace',
  del: 'Delete',
  delete: 'Delete',
  insert: 'Insert',
  space: 'space',
  up: 'Up',
  down: 'Down',
  left: 'Left',
  right: 'Right',
  home: 'Home',
  end: 'End',
  pageup: 'Prior',
  pgup: 'Prior',
  pagedown: 'Next',
  pgdn: 'Next',
  capslock: 'Caps_Lock',
  numlock: 'Num_Lock',
  scrolllock: 'Scroll_Lock',
  pause: 'Pause',
  print: 'Print',
  printscreen: 'Print',
  prntscrn: 'Print',
  prtsc: 'Print',
  prtscr: 'Print',
  execute: 'Execute',
  help: 'Help',
  select: 'Select',
  add: 'KP_Add',
  subtract: 'KP_Subtract',
  multiply: 'KP_Multiply',
  divide: 'KP_Divide',
  decimal: 'KP_Decimal',
  separator: 'KP_Separator',
  // Spellings models use that pyautogui does not know, as the key pyautogui calls it.
  control: { x11: 'ctrl', pyautogui: 'ctrl' },
  super: { x11: 'super', pyautogui: 'win' },
  meta: { x11: 'super', pyautogui: 'win' },
  cmd: { x11: 'super', pyautogui: 'win' },
  arrowup: { x11: 'Up', pyautogui: 'up' },
  arrowdown: { x11: 'Down', pyautogui: 'down' },
  arrowleft: { x11: 'Left', pyautogui: 'left' },
  arrowright: { x11: 'Right', pyautogui: 'right' },
  // The X keysyms of the left and right modifiers, lower case (and ctrl_l, ctrl_r as pynput shortens them).
  control_l: { x11: 'Control_L', pyautogui: 'ctrlleft' },
  control_r: { x11: 'Control_R', pyautogui: 'ctrlright' },
  ctrl_l: { x11: 'Control_L', pyautogui: 'ctrlleft' },
  ctrl_r: { x11: 'Control_R', pyautogui: 'ctrlright' },
  shift_l: { x11: 'Shift_L', pyautogui: 'shiftleft' },
  shift_r: { x11: 'Shift_R', pyautogui: 'shiftright' },
  alt_l: { x11: 'Alt_L', pyautogui: 'altleft' },
  alt_r: { x11: 'Alt_R', pyautogui: 'altright' },
  super_l: { x11: 'Super_L', pyautogui: 'winleft' },
  super_r: { x11: 'Super_R', pyautogui: 'winright' },
  // Mac names: pyautogui's X11 backend ignores them, so on these Linux desktops they press their counterparts.
  command: { x11: 'super', pyautogui: 'win' },
  option: { x11: 'alt', pyautogui: 'alt' },
  optionleft: { x11: 'Alt_L', pyautogui: 'altleft' },
  optionright: { x11: 'Alt_R', pyautogui: 'altright' },
};

/** One-character keys pyautogui presses as themselves, with their X keysyms. */
const CHARACTERS: Record<string, string> = {
  '\t': 'Tab',
  '\n': 'Return',
  '\r': 'Return',
  ' ': 'space',
  '!': 'exclam',
  '"': 'quotedbl',
  '#': 'numbersign',
  $: 'dollar',
  '%': 'percent',
  '&': 'ampersand',
  "'": 'apostrophe',
  '(': 'parenleft',
  ')': 'parenright',
  '*': 'asterisk',
  '+': 'plus',
  ',': 'comma',
  '-': 'minus',
  '.': 'period',
  '/': 'slash',
  ':': 'colon',
  ';': 'semicolon',
  '<': 'less',
  '=': 'equal',
  '>': 'greater',
  '?': 'question',
  '@': 'at',
  '[': 'bracketleft',
  '\\': 'backslash',
  ']': 'bracketright',
  '^': 'asciicircum',
  _: 'underscore',
  '`': 'grave',
  '{': 'braceleft',
  '|': 'bar',
  '}': 'braceright',
  '~': 'asciitilde',
};

const own = <T>(table: Record<string, T>, key: string): T | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

function lookUp(key: string): Key | undefined {
  const lower = key.toLowerCase();
  if (PRESSES_NOTHING.has(lower)) return { pyautogui: lower };
  const named = own(NAMED, lower);
  if (typeof named === 'string') return { x11: named, pyautogui: lower };
  if (named !== undefined) return named;
  if (/^f([1-9]|1\d|2[0-4])$/.test(lower)) return { x11: lower.toUpperCase(), pyautogui: lower };
  if (/^num\d$/.test(lower)) return { x11: `KP_${lower.slice(3)}`, pyautogui: lower };
  if (/^[a-z0-9]$/.test(lower)) return { x11: lower, pyautogui: lower };
  const character = own(CHARACTERS, key);
  return character === undefined ? undefined : { x11: character, pyautogui: key };
}

export type KeyTarget = 'x11' | 'pyautogui';

/**
 * The renderer's name for a model's key name; undefined when the key is not known, or (for x11)
 * when it presses nothing.
 */
export const keyName = (key: string, target: KeyTarget): string | undefined => lookUp(key)?.[target];

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

/**
 * The renderer's names for a hotkey's keys, leaving out (for x11) those that press nothing;
 * RenderError naming the first key the table does not know.
 */
export function keyNames(keys: readonly string[], target: KeyTarget): string[] {
  return keys.flatMap((key) => {
    const known = lookUp(key);
    if (known === undefined) throw new RenderError(`unknown key "${key}" in hotkey ${JSON.stringify(keys)}`);
    const name = known[target];
    return name === undefined ? [] : [name];
  });
}
