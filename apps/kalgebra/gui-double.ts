import { readQuoted } from '../../core/python-literal';
import { KALGEBRA_TAB_HOTKEYS } from './layout';
import type { ExecuteResult } from '../../io/osworld-client';
import type { KalgebraStateDouble } from './double';

/**
 * TEST DOUBLE of KAlgebra's GUI inside a ScienceBoard VM, for the OSWorld server double's
 * `execute`: it reads the pyautogui code of each action (core/render/pyautogui.ts) and does to the
 * KAlgebra state-server double what the app does with those keys. A tab mnemonic (alt+c, alt+2,
 * alt+3) shows its tab; text typed and submitted with Enter in the 2D Graph tab adds that function,
 * in the 3D Graph tab replaces the surface (its one input). Clicks and other keys only move focus
 * here. Compared with nothing but the reference plans' own actions (apps/kalgebra/reference.ts):
 * it stands for the app so that a plan's plots reach the state server the checks read.
 */
export function kalgebraGui(app: KalgebraStateDouble): (command: unknown) => ExecuteResult | undefined {
  return (command) => {
    const code = Array.isArray(command) && typeof command[2] === 'string' ? command[2] : '';
    if (!code.includes('import pyautogui')) return undefined;
    const hotkey = /pyautogui\.hotkey\(([^)]*)\)/.exec(code)?.[1];
    const keys = hotkey === undefined ? [] : [...hotkey.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    const tab = KALGEBRA_TAB_HOTKEYS.findIndex((mnemonic) => mnemonic.join('+') === keys.join('+'));
    if (tab >= 0) app.showTab(tab);
    const written = code.indexOf('pyautogui.write(');
    const text = written < 0 ? undefined : readQuoted(code, written + 'pyautogui.write('.length)?.value;
    if (text !== undefined && code.includes("pyautogui.press('enter')")) enter(app, text);
    return { output: '', error: '', returncode: 0 };
  };
}

/** A line entered in the current tab: a function for the 2D graph, the surface of the 3D graph. */
function enter(app: KalgebraStateDouble, text: string): void {
  const tab = app.tab();
  if (tab !== 1 && tab !== 2) return;
  if (tab === 2) app.plotted.splice(0, app.plotted.length, ...app.plotted.filter((curve) => curve.dimensions === 2));
  if (!app.plot(tab === 1 ? 2 : 3, text)) throw new Error(`the KAlgebra double has no residual for ${JSON.stringify(text)}`);
}
