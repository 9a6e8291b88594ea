import type { GuiAction } from '../../core/actions';
import type { Size } from '../../core/smart-resize';
import { freeIdentifiers, splitAssignment, splitLambda } from './expressions';
import type { Task } from '../../core/task';
import { hasReferenceAnswer } from '../../core/task-common';
import { KALGEBRA_TAB_HOTKEYS, kalgebraPoint, type KAlgebraControl } from './layout';
import { perturbStop, stopOf, withinSteps, type ReferencePlan, type StopAction } from '../../core/policies/plans';

/**
 * The reference policy for KAlgebra tasks: a task's `ans` (its reference solution) as the GUI
 * actions that carry it out on a local desktop. Deterministic in (task, screen), so a scripted
 * model can replay it. `ans` holds lines separated by newlines or "; ":
 *   `ANS 46368`            answer and stop
 *   `FAIL`, `DONE`         stop that way (A-04's reference is to give up)
 *   `Ctrl+L: ~/script.kal` load a script (Ctrl+L, then the file dialog)
 *   `p := log(3)/log(2)`   a calculator line (consecutive ones go in one typed action)
 *   `x->x^2`, `x=(y+2)*ln(y)`, `x^2+y^2-z^2=1`, `(x, y)->...`
 *                          a function to plot: 3D when it has two parameters or uses z
 * Tabs are switched with their mnemonics (which also focus the tab's input); inputs that are
 * already on screen are clicked at the positions of the layout table (layout.ts).
 */

type Line =
  | { readonly kind: 'stop'; readonly stop: StopAction }
  | { readonly kind: 'load'; readonly path: string }
  | { readonly kind: 'calculator' | 'plot2d' | 'plot3d'; readonly text: string };

export function referencePlan(task: Task, screen: Size): ReferencePlan {
  return plan(task, screen, false);
}

/**
 * The reference plan with a wrong result, which the task's checks must fail: its last stop,
 * calculator line or plot is changed (an answer plus one, the other of FAIL and DONE, an
 * assigned value plus one, a plot's last constant plus one).
 */
export function perturbedPlan(task: Task, screen: Size): ReferencePlan {
  return plan(task, screen, true);
}

function plan(task: Task, screen: Size, perturb: boolean): ReferencePlan {
  if (!hasReferenceAnswer(task)) return { replayable: false, reason: `no reference answer (ans is ${JSON.stringify(task.ans ?? null)})` };
  let lines = mergeCalculatorLines(
    (task.ans ?? '')
      .split(/\n|; /)
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .map(classify),
  );
  if (perturb) lines = perturbLast(lines);
  return withinSteps(task, toActions(task, lines, screen));
}

function classify(line: string): Line {
  const stop = stopOf(line);
  if (stop !== undefined) return { kind: 'stop', stop };
  const load = /^Ctrl\+L:\s*(.+)$/i.exec(line);
  if (load !== null) return { kind: 'load', path: (load[1] ?? '').trim() };
  if (splitAssignment(line) !== undefined) return { kind: 'calculator', text: line };
  const lambda = splitLambda(line);
  if (lambda !== undefined) return { kind: lambda.params.length >= 2 ? 'plot3d' : 'plot2d', text: line };
  const variables = freeIdentifiers(line);
  if (variables.has('z')) return { kind: 'plot3d', text: line };
  if (['x', 'y', 'q'].some((v) => variables.has(v))) return { kind: 'plot2d', text: line };
  return { kind: 'calculator', text: line };
}

/** Consecutive calculator lines become one, typed in one action: each Enter runs a line. */
function mergeCalculatorLines(lines: readonly Line[]): Line[] {
  const merged: Line[] = [];
  for (const line of lines) {
    const previous = merged[merged.length - 1];
    if (line.kind === 'calculator' && previous?.kind === 'calculator') merged[merged.length - 1] = { kind: 'calculator', text: `${previous.text}\n${line.text}` };
    else merged.push(line);
  }
  return merged;
}

/** What the app shows while the plan runs: which tab, and what the 2D and 3D graphs hold. */
interface AppView {
  tab: number;
  functions2d: number;
  has3d: boolean;
}

function toActions(task: Task, lines: readonly Line[], screen: Size): GuiAction[] {
  const view: AppView = { tab: 0, functions2d: 0, has3d: false };
  for (const step of task.initialize) {
    if (step.func === 'tab') view.tab = step.index;
    else if (step.func === 'func_2d') view.functions2d += 1;
    else if (step.func === 'func_3d') view.has3d = true;
  }
  const click = (control: KAlgebraControl): GuiAction => ({ type: 'click', ...kalgebraPoint(control, screen) });
  /** Opens tab `index` with its mnemonic, which also focuses the tab's input; nothing when it is open. */
  const openTab = (index: 0 | 1 | 2): GuiAction[] => {
    if (view.tab === index) return [];
    view.tab = index;
    return [{ type: 'hotkey', keys: [...KALGEBRA_TAB_HOTKEYS[index]] }];
  };

  const actions: GuiAction[] = [];
  for (const line of lines) {
    switch (line.kind) {
      case 'stop':
        actions.push(line.stop);
        return actions;
      case 'load': {
        const opened = openTab(0);
        actions.push(...opened, { type: 'hotkey', keys: ['ctrl', 'l'] }, { type: 'type', text: line.path, submit: true });
        break;
      }
      case 'calculator': {
        const opened = openTab(0);
        actions.push(...(opened.length > 0 ? opened : [click('calculatorInput')]), { type: 'type', text: line.text, submit: true });
        break;
      }
      case 'plot2d': {
        const opened = openTab(1);
        // An empty list opens on the Add page with the editor focused; after a plot the list shows.
        if (opened.length === 0 || view.functions2d > 0) opened.push(click(view.functions2d === 0 ? 'functionEditor' : 'functionsAddTab'));
        actions.push(...opened, { type: 'type', text: line.text, submit: true });
        view.functions2d += 1;
        break;
      }
      case 'plot3d': {
        const opened = openTab(2);
        actions.push(...(opened.length > 0 ? opened : [click('graph3dInput')]));
        if (view.has3d) actions.push({ type: 'hotkey', keys: ['ctrl', 'a'] });
        actions.push({ type: 'type', text: line.text, submit: true });
        view.has3d = true;
        break;
      }
    }
  }
  actions.push({ type: 'done' });
  return actions;
}

/** Changes the last stop, calculator line or plot so that its result is wrong. */
function perturbLast(lines: readonly Line[]): Line[] {
  let index = -1;
  lines.forEach((line, i) => {
    if (line.kind !== 'load') index = i;
  });
  return lines.map((line, i) => {
    if (i !== index) return line;
    switch (line.kind) {
      case 'stop':
        return { kind: 'stop', stop: perturbStop(line.stop) };
      case 'calculator':
        return { kind: 'calculator', text: `${line.text}+1` };
      case 'plot2d':
      case 'plot3d':
        return { kind: line.kind, text: bumpLastConstant(line.text) };
      case 'load':
        return line;
    }
  });
}

/** The expression with its last numeric constant increased by one (`x->x-1` becomes `x->x-2`). */
function bumpLastConstant(expression: string): string {
  const constants = [...expression.matchAll(/(?<![A-Za-z_\d.])\d+(?:\.\d+)?(?![\d.])/g)];
  const last = constants[constants.length - 1];
  if (last === undefined) return `${expression}+1`;
  const at = last.index ?? 0;
  return `${expression.slice(0, at)}${Number(last[0]) + 1}${expression.slice(at + last[0].length)}`;
}
