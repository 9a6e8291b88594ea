import type { GuiAction } from '../../core/actions';
import type { Size } from '../../core/smart-resize';
import type { Task } from '../../core/task';
import { commandLine } from '../../core/task-common';
import { isTeXFileCheck } from './schema';
import { initialText } from './checks';
import { perturbStop, stopOf, withinSteps, type ReferencePlan, type StopAction } from '../../core/policies/plans';

/**
 * The reference policy for TeXstudio tasks, derived from the task's checks and `ans`, as GUI
 * actions on the stock TeXstudio of a local desktop (keyboard only, so the same at any screen
 * size). Deterministic in the task, so a scripted model can replay it.
 * - An edit: a `file` check's `source` → `target`, or an `ans` line `A -> B` (C-06's `\or -> \vee`),
 *   in the document TeXstudio shows at start (the last one its launch opens). It is made with
 *   TeXstudio's own find-and-replace: Ctrl+R opens the panel with the find field focused, which
 *   selects the first match as it is typed; a Tab moves to the replace field; Enter replaces the
 *   selected match and selects the next, once per occurrence; after the last, TeXstudio asks
 *   whether to restart from the beginning, and Escape says no; Ctrl+S saves.
 * - `ANS <answer>`, `FAIL`, `DONE` in `ans`: the stop (D-01 answers 13); otherwise DONE.
 * - A cross-application task (it launches KAlgebra after TeXstudio) shows the other app on top:
 *   the plan first goes back to TeXstudio with Alt+Tab (the window focused before). Only when
 *   TeXstudio is the last or the one but last app launched.
 * The perturbed plan types a target with one more letter (a different file for `file`, an
 * undefined command such as `\veex` for `compile`), or gives the perturbed stop when there is no edit.
 */

interface Edit {
  readonly path: string;
  readonly source: string;
  readonly target: string;
}

export function referencePlan(task: Task, _screen?: Size): ReferencePlan {
  return plan(task, false);
}

export function perturbedPlan(task: Task, _screen?: Size): ReferencePlan {
  return plan(task, true);
}

function plan(task: Task, perturb: boolean): ReferencePlan {
  const shown = shownDocument(task);
  const lines = (task.ans ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '' && l !== 'N/A');
  const stops = lines.map(stopOf).filter((s): s is StopAction => s !== undefined);
  const edits: Edit[] = task.evaluate.filter(isTeXFileCheck).filter((c) => c.source !== undefined).map((c) => ({ path: c.path, source: c.source ?? '', target: c.target ?? '' }));
  for (const line of lines) {
    const arrow = /^(.+?)\s+->\s+(.+)$/.exec(line);
    if (arrow !== null && stopOf(line) === undefined && shown !== undefined) edits.push({ path: shown, source: arrow[1] ?? '', target: arrow[2] ?? '' });
  }
  if (task.evaluate.some((c) => c.type === 'include')) return { replayable: false, reason: 'its include checks ask for text the task does not give' };
  if (edits.length === 0 && stops.length === 0) return { replayable: false, reason: 'neither its checks nor its ans give an edit or an answer' };
  if (edits.length > 1) return { replayable: false, reason: `it asks for ${edits.length} edits; the policy makes one` };

  const actions: GuiAction[] = [];
  const [edit] = edits;
  if (edit !== undefined) {
    const behind = appsLaunchedAfter(task);
    if (behind > 1) return { replayable: false, reason: `${behind} apps are launched after TeXstudio; Alt+Tab reaches the one but last` };
    if (behind === 1) actions.push({ type: 'hotkey', keys: ['alt', 'tab'] });
    if (edit.path !== shown) return { replayable: false, reason: `the edit is in ${edit.path}, TeXstudio shows ${shown ?? 'no document'}` };
    const text = initialText(task, edit.path);
    const occurrences = text === undefined ? 0 : text.split(edit.source).length - 1;
    if (occurrences === 0) return { replayable: false, reason: `${JSON.stringify(edit.source)} is not in the text the task writes to ${edit.path}` };
    const target = perturb ? `${edit.target}x` : edit.target;
    actions.push(
      { type: 'hotkey', keys: ['ctrl', 'r'] },
      { type: 'type', text: `${edit.source}\t${target}`, submit: true },
      ...Array.from({ length: occurrences - 1 }, (): GuiAction => ({ type: 'hotkey', keys: ['enter'] })),
      { type: 'hotkey', keys: ['escape'] },
      { type: 'hotkey', keys: ['ctrl', 's'] },
    );
  }
  const stop = stops[0] ?? { type: 'done' };
  actions.push(perturb && edit === undefined ? perturbStop(stop) : stop);
  return withinSteps(task, actions);
}

/** The document TeXstudio shows after the task's launch: the last one its command opens, as a VM path. */
function shownDocument(task: Task): string | undefined {
  let shown: string | undefined;
  for (const step of task.initialize) {
    if (step.func !== 'launch') continue;
    const words = commandLine(step.command).split(/\s+/);
    const at = words.findIndex((w) => /(^|\/)texstudio$/.test(w));
    if (at !== -1 && at < words.length - 1) shown = words[words.length - 1];
  }
  return shown;
}

/** How many other programs the task launches after its last TeXstudio launch (their windows cover TeXstudio's). */
function appsLaunchedAfter(task: Task): number {
  const launched = task.initialize.flatMap((step) => (step.func === 'launch' ? [/(^|[\s/])texstudio(\s|$)/.test(commandLine(step.command))] : []));
  const last = launched.lastIndexOf(true);
  return last === -1 ? 0 : launched.length - 1 - last;
}
