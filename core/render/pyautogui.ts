import type { GuiAction } from '../actions';
import { keyNames, RenderError } from './keys';

/**
 * A typed action as pyautogui statements for an OSWorld/ScienceBoard VM, whose server runs them with
 * `python3 -c` (docs/formats.md). Everything a model wrote reaches Python only as a string literal
 * made by pythonString, numbers only after an integer check, keys only through the key table: no
 * model text can become code.
 */

/**
 * A Python string literal equal to `text`. Only printable ASCII stays as is (minus backslash and
 * quote); everything else becomes an escape, so the literal is one line of pure ASCII whatever the
 * model wrote.
 */
export function pythonString(text: string): string {
  let out = "'";
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === '\\' || ch === "'") out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code >= 0x20 && code < 0x7f) out += ch;
    else if (code <= 0xff) out += `\\x${hex(code, 2)}`;
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return `${out}'`;
}

const hex = (code: number, width: number): string => code.toString(16).padStart(width, '0');

/** A non-negative integer as Python source; anything else is refused. */
function integer(value: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RenderError(`${what} must be a non-negative integer, got ${String(value)}`);
  return String(value);
}

function seconds(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new RenderError(`wait must be a non-negative number of seconds, got ${String(value)}`);
  return String(value);
}

const at = (x: number, y: number): string => `${integer(x, 'x')}, ${integer(y, 'y')}`;

/** pyautogui can only press keys that exist on the keyboard; other text goes through the clipboard. */
const typeable = (text: string): boolean => /^[\x20-\x7e\n\t]*$/.test(text);

/**
 * Pastes `text` through the clipboard: xsel or xclip, whichever the VM has, takes the text with
 * its output detached, then ctrl+v. Both leave a child in the background to serve the selection;
 * xclip's keeps the output it was given, and were that the server's pipe, /execute would wait its
 * full 120 s and answer 500 for text that was typed (pyperclip, which picks xclip first, does
 * exactly that). No tool: the command fails saying so, having pasted nothing.
 */
function pasteStatements(text: string): string[] {
  const tools = "(['xsel', '--clipboard', '--input'], ['xclip', '-selection', 'clipboard'])";
  const none = pythonString('no xsel or xclip in the VM: non-ASCII text is typed through the clipboard');
  return [
    'import shutil, subprocess, sys',
    `clip = next((argv for argv in ${tools} if shutil.which(argv[0])), None) or sys.exit(${none})`,
    `subprocess.run(clip, input=${pythonString(text)}.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=10)`,
    "pyautogui.hotkey('ctrl', 'v')",
    'time.sleep(0.3)',
  ];
}

/**
 * Python statements, joined by `; `, that perform `action`. Terminal actions (done, fail, answer,
 * call_user) touch nothing: `pass`. Throws RenderError for an unknown key or a bad number.
 */
export function toPyautogui(action: GuiAction): string {
  switch (action.type) {
    case 'click':
      return `pyautogui.click(${at(action.x, action.y)})`;
    case 'double_click':
      return `pyautogui.doubleClick(${at(action.x, action.y)})`;
    case 'right_click':
      return `pyautogui.rightClick(${at(action.x, action.y)})`;
    case 'hover':
      return `pyautogui.moveTo(${at(action.x, action.y)})`;
    case 'drag':
      return [
        `pyautogui.moveTo(${at(action.from.x, action.from.y)})`,
        `pyautogui.dragTo(${at(action.to.x, action.to.y)}, duration=0.5, button='left')`,
      ].join('; ');
    case 'scroll': {
      const clicks = integer(action.amount, 'scroll amount');
      const vertical = action.direction === 'up' || action.direction === 'down';
      const sign = action.direction === 'down' || action.direction === 'left' ? '-' : '';
      // Without a point, where the pointer is: pyautogui's scroll without x and y, as UI-TARS's conversion writes it.
      const where = action.x === undefined || action.y === undefined ? '' : `, x=${integer(action.x, 'x')}, y=${integer(action.y, 'y')}`;
      return `pyautogui.${vertical ? 'scroll' : 'hscroll'}(${sign}${clicks}${where})`;
    }
    case 'type': {
      const statements: string[] = [];
      if (action.text !== '' && typeable(action.text)) {
        statements.push(`pyautogui.write(${pythonString(action.text)}, interval=0.02)`);
      } else if (action.text !== '') {
        statements.push(...pasteStatements(action.text));
      }
      if (action.submit) statements.push("pyautogui.press('enter')");
      return statements.length === 0 ? 'pass' : statements.join('; ');
    }
    case 'hotkey':
      return `pyautogui.hotkey(${keyNames(action.keys, 'pyautogui').map(pythonString).join(', ')})`;
    case 'wait':
      return `time.sleep(${seconds(action.seconds)})`;
    case 'done':
    case 'fail':
    case 'answer':
    case 'call_user':
      return 'pass';
  }
}

const PRELUDE = 'import pyautogui; import time; pyautogui.FAILSAFE = False; ';

/**
 * The argv the OSWorld server's `/execute` runs with `shell: false`: an argument list, so no shell
 * ever parses the code.
 */
export const pyautoguiCommand = (code: string): { command: string[] } => ({ command: ['python3', '-c', PRELUDE + code] });
