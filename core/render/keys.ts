/**
 * Key names as models write them (UI-TARS: `hotkey(key='ctrl c')`, lower case) mapped to the X
 * keysyms xdotool presses and to the names pyautogui knows. A key outside this table is refused,
 * so a model can never smuggle an arbitrary string into either renderer.
 */
const NAMED: Record<string, { readonly x11: string; readonly pyautogui: string }> = {
  ctrl: { x11: 'ctrl', pyautogui: 'ctrl' },
  control: { x11: 'ctrl', pyautogui: 'ctrl' },
  alt: { x11: 'alt', pyautogui: 'alt' },
  shift: { x11: 'shift', pyautogui: 'shift' },
  super: { x11: 'super', pyautogui: 'win' },
  win: { x11: 'super', pyautogui: 'win' },
  meta: { x11: 'super', pyautogui: 'win' },
  cmd: { x11: 'super', pyautogui: 'win' },
  enter: { x11: 'Return', pyautogui: 'enter' },
  return: { x11: 'Return', pyautogui: 'enter' },
  esc: { x11: 'Escape', pyautogui: 'esc' },
  escape: { x11: 'Escape', pyautogui: 'esc' },
  tab: { x11: 'Tab', pyautogui: 'tab' },
  backspace: { x11: 'BackSpace', pyautogui: 'backspace' },
  delete: { x11: 'Delete', pyautogui: 'delete' },
  del: { x11: 'Delete', pyautogui: 'delete' },
  insert: { x11: 'Insert', pyautogui: 'insert' },
  space: { x11: 'space', pyautogui: 'space' },
  up: { x11: 'Up', pyautogui: 'up' },
  down: { x11: 'Down', pyautogui: 'down' },
  left: { x11: 'Left', pyautogui: 'left' },
  right: { x11: 'Right', pyautogui: 'right' },
  arrowup: { x11: 'Up', pyautogui: 'up' },
  arrowdown: { x11: 'Down', pyautogui: 'down' },
  arrowleft: { x11: 'Left', pyautogui: 'left' },
  arrowright: { x11: 'Right', pyautogui: 'right' },
  home: { x11: 'Home', pyautogui: 'home' },
  end: { x11: 'End', pyautogui: 'end' },
  pageup: { x11: 'Prior', pyautogui: 'pageup' },
  pagedown: { x11: 'Next', pyautogui: 'pagedown' },
  capslock: { x11: 'Caps_Lock', pyautogui: 'capslock' },
  printscreen: { x11: 'Print', pyautogui: 'printscreen' },
};

const PUNCTUATION: Record<string, string> = {
  '+': 'plus',
  '-': 'minus',
  '=': 'equal',
  ',': 'comma',
  '.': 'period',
  '/': 'slash',
  ';': 'semicolon',
  "'": 'apostrophe',
  '[': 'bracketleft',
  ']': 'bracketright',
  '\\': 'backslash',
  '`': 'grave',
};

export type KeyTarget = 'x11' | 'pyautogui';

/** The renderer's name for a model's key name, or undefined when the key is not known. */
export function keyName(key: string, target: KeyTarget): string | undefined {
  const lower = key.toLowerCase();
  const named = NAMED[lower];
  if (named !== undefined) return named[target];
  if (/^f([1-9]|1[0-2])$/.test(lower)) return target === 'x11' ? lower.toUpperCase() : lower;
  if (/^[a-z0-9]$/.test(lower)) return lower;
  const punctuation = PUNCTUATION[key];
  if (punctuation !== undefined) return target === 'x11' ? punctuation : key;
  return undefined;
}

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

/** The renderer's names for a hotkey's keys; RenderError naming the first key it does not know. */
export function keyNames(keys: readonly string[], target: KeyTarget): string[] {
  return keys.map((key) => {
    const name = keyName(key, target);
    if (name === undefined) throw new RenderError(`unknown key "${key}" in hotkey ${JSON.stringify(keys)}`);
    return name;
  });
}
