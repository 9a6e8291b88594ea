import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { perturbedPlanFor, POLICY_SOFTWARE, referencePlanFor } from '../../../apps/policies';
import { perturbedPlan, referencePlan } from '../../../apps/texstudio/reference';
import { parseTask, type Task } from '../../../core/task';
import { APPS } from '../../../apps/index';

const DIR = path.resolve(__dirname, '../../../../data/scienceboard/TeXstudio');
const TASKS: Task[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => parseTask(APPS, JSON.parse(readFileSync(path.join(DIR, f), 'utf8')), f.replace(/\.json$/, '')));
const task = (id: string): Task => TASKS.find((t) => t.id === id) ?? assert.fail(id);
const SCREEN = { width: 1920, height: 1080 };

describe('TeXstudio reference policy (plans)', () => {
  it('edits through find-and-replace, saves and stops: B-01 from its file check, C-06 from its ans, D-01 answers', () => {
    assert.deepEqual(referencePlan(task('B-01')), {
      replayable: true,
      actions: [
        { type: 'hotkey', keys: ['ctrl', 'r'] },
        { type: 'type', text: '\\cite{}\t\\cite{de2015lean}', submit: true },
        { type: 'hotkey', keys: ['escape'] },
        { type: 'hotkey', keys: ['ctrl', 's'] },
        { type: 'done' },
      ],
    });
    const c06 = referencePlan(task('C-06'));
    assert.ok(c06.replayable);
    assert.deepEqual(c06.actions[1], { type: 'type', text: '\\or\t\\vee', submit: true });
    assert.equal(c06.actions.length, task('C-06').steps, 'C-06 fits its 5 steps exactly');
    assert.deepEqual(referencePlan(task('D-01')), { replayable: true, actions: [{ type: 'answer', text: '13' }] });
  });

  it('makes one Enter per further occurrence, and a wrong result in the perturbed plan', () => {
    const b01 = task('B-01');
    const twice: Task = {
      ...b01,
      initialize: b01.initialize.map((s) => (s.func === 'touch' && s.path.endsWith('main.tex') ? { ...s, text: `${s.text}\\cite{}\n` } : s)),
    };
    const plan = referencePlan(twice);
    assert.ok(plan.replayable);
    assert.deepEqual(plan.actions.slice(1, 4), [
      { type: 'type', text: '\\cite{}\t\\cite{de2015lean}', submit: true },
      { type: 'hotkey', keys: ['enter'] },
      { type: 'hotkey', keys: ['escape'] },
    ]);
    const perturbed = perturbedPlan(task('C-06'));
    assert.ok(perturbed.replayable);
    assert.deepEqual(perturbed.actions[1], { type: 'type', text: '\\or\t\\veex', submit: true });
    assert.deepEqual(perturbedPlan(task('D-01')), { replayable: true, actions: [{ type: 'answer', text: '14' }] });
    const fail: Task = { ...task('D-01'), evaluate: [{ type: 'stop', value: 'FAIL' }], ans: 'FAIL' };
    assert.deepEqual([referencePlan(fail), perturbedPlan(fail)], [
      { replayable: true, actions: [{ type: 'fail' }] },
      { replayable: true, actions: [{ type: 'done' }] },
    ]);
    const done: Task = { ...fail, evaluate: [{ type: 'stop', value: 'DONE' }], ans: 'DONE' };
    assert.deepEqual(perturbedPlan(done), { replayable: true, actions: [{ type: 'fail' }] });
  });

  it('goes back to TeXstudio with Alt+Tab first when another app was launched after it, and only then', () => {
    const b01 = task('B-01');
    const kalgebra = { func: 'launch' as const, command: 'LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra «PORTLIKE»', shell: true };
    const after = referencePlan({ ...b01, initialize: [...b01.initialize, kalgebra] });
    assert.ok(after.replayable);
    assert.deepEqual(after.actions.slice(0, 2), [
      { type: 'hotkey', keys: ['alt', 'tab'] },
      { type: 'hotkey', keys: ['ctrl', 'r'] },
    ]);
    const before = referencePlan({ ...b01, initialize: [b01.initialize[0]!, b01.initialize[1]!, kalgebra, b01.initialize[2]!] });
    assert.ok(before.replayable);
    assert.deepEqual(before.actions[0], { type: 'hotkey', keys: ['ctrl', 'r'] });
    assert.deepEqual(referencePlan({ ...b01, initialize: [...b01.initialize, kalgebra, { func: 'launch', command: 'code /home/user/sci' }] }), {
      replayable: false,
      reason: '2 apps are launched after TeXstudio; Alt+Tab reaches the one but last',
    });
  });

  it('has a plan for every task but B-04, and says why not', () => {
    const refused = TASKS.map((t) => ({ id: t.id, plan: referencePlan(t) })).filter((p) => !p.plan.replayable);
    assert.deepEqual(refused, [{ id: 'B-04', plan: { replayable: false, reason: 'its include checks ask for text the task does not give' } }]);
    for (const t of TASKS.filter((x) => x.id !== 'B-04')) {
      const [reference, perturbed] = [referencePlan(t), perturbedPlan(t)];
      assert.ok(reference.replayable && perturbed.replayable, t.id);
      assert.ok(reference.actions.length <= t.steps, t.id);
      assert.notDeepEqual(reference.actions, perturbed.actions, t.id);
    }
  });

  it('refuses edits it cannot make: not in the shown document, not in its text, more than one, none at all', () => {
    const b01 = task('B-01');
    const reason = (t: Task): string => {
      const plan = referencePlan(t);
      assert.ok(!plan.replayable);
      return plan.reason;
    };
    assert.equal(reason({ ...b01, evaluate: [{ type: 'file', path: '/home/user/atelier/refs.bib', source: 'Lean', target: 'LEAN' }] }), 'the edit is in /home/user/atelier/refs.bib, TeXstudio shows /home/user/atelier/main.tex');
    assert.equal(reason({ ...b01, evaluate: [{ type: 'file', path: '/home/user/atelier/main.tex', source: 'absent', target: 'x' }] }), '"absent" is not in the text the task writes to /home/user/atelier/main.tex');
    assert.equal(reason({ ...b01, ans: 'Lean -> LEAN' }), 'it asks for 2 edits; the policy makes one');
    assert.equal(reason({ ...b01, evaluate: [{ type: 'compile', path: '/home/user/atelier', file: 'main' }] }), 'neither its checks nor its ans give an edit or an answer');
    assert.equal(reason({ ...task('C-06'), steps: 4 }), 'the plan needs 5 steps, the task allows 4');
  });

  it('dispatches by software: the six ScienceBoard apps have policies, others none', () => {
    assert.deepEqual(POLICY_SOFTWARE, ['KAlgebra', 'ChimeraX', 'GrassGIS', 'Celestia', 'TeXstudio', 'Lean']);
    assert.deepEqual(referencePlanFor(task('D-01'), SCREEN), referencePlan(task('D-01')));
    assert.deepEqual(perturbedPlanFor(task('D-01'), SCREEN), perturbedPlan(task('D-01')));
    const unknown = { ...task('D-01'), type: 'Frobnicator' };
    assert.deepEqual(referencePlanFor(unknown, SCREEN), { replayable: false, reason: 'no reference policy for Frobnicator' });
    assert.deepEqual(perturbedPlanFor(unknown, SCREEN), { replayable: false, reason: 'no reference policy for Frobnicator' });
  });
});
