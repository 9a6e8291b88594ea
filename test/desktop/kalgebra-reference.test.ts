import assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import { isTerminal } from '../../core/episode';
import { kalgebraPoint } from '../../apps/kalgebra/layout';
import { perturbedPlan, referencePlan } from '../../apps/kalgebra/reference';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { parseTask } from '../../core/task';
import { closeTestDesktop, loadKAlgebraTasks, play, REPO, testDesktop } from '../support/desktop';
import { APPS } from '../../apps/index';

const TASKS = loadKAlgebraTasks();
const SCREEN = { width: 1920, height: 1080 };

/**
 * ScienceBoard's KAlgebra A-04 (tasks/VM/KAlgebra/A-04.json, not among the 20 shipped tasks),
 * unchanged but for its id: the reference answer is to give up, because no such function exists.
 */
const A04 = parseTask(APPS, 
  {
    type: 'KAlgebra',
    sort: 'VM',
    steps: 5,
    instruction: 'Answer the question: name of the built-in function which calculate the inverse of a matrix.',
    version: '0.1',
    snapshot: 'sci_bench',
    initialize: [
      { func: 'launch', wait: 2.5, command: 'LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra «PORTLIKE»', shell: true },
      { func: 'tab', index: 3 },
    ],
    evaluate: [{ type: 'stop', value: 'FAIL' }],
    ans: 'FAIL',
  },
  'A-04',
);
/** The tasks whose `ans` is N/A: ScienceBoard gives no reference solution for them. */
const NOT_REPLAYABLE = ['B-03', 'B-04', 'B-06'];

describe('KAlgebra reference policy', () => {
  it('covers the 20 KAlgebra tasks and lists exactly the N/A ones as not replayable', () => {
    assert.equal(TASKS.length, 20);
    const refused = TASKS.map((t) => ({ id: t.id, plan: referencePlan(t, SCREEN) })).filter((p) => !p.plan.replayable);
    assert.deepEqual(
      refused.map((r) => r.id),
      NOT_REPLAYABLE,
    );
    for (const { plan } of refused) assert.deepEqual(plan, { replayable: false, reason: 'no reference answer (ans is "N/A")' });
  });

  it('fits every plan in the task step limit, ends it with done or an answer, and is a pure function of task and screen', () => {
    for (const task of TASKS.filter((t) => !NOT_REPLAYABLE.includes(t.id))) {
      const plan = referencePlan(task, SCREEN);
      assert.ok(plan.replayable, task.id);
      assert.ok(plan.actions.length <= task.steps, `${task.id}: ${plan.actions.length} > ${task.steps}`);
      const last = plan.actions.at(-1);
      assert.ok(last !== undefined && (last.type === 'done' || last.type === 'answer'), task.id);
      assert.ok(plan.actions.slice(0, -1).every((a) => !isTerminal(a)), task.id);
      assert.deepEqual(referencePlan(structuredClone(task), { ...SCREEN }), plan, `${task.id} is deterministic`);
      for (const a of plan.actions) {
        if (a.type === 'click') assert.ok(a.x < SCREEN.width && a.y < SCREEN.height, `${task.id} clicks on screen`);
      }
    }
  });

  it('writes calculator lines in one typed action, plots in their tab, answers and loads scripts', () => {
    const byId = (id: string) => {
      const plan = referencePlan(TASKS.find((t) => t.id === id) ?? assert.fail(id), SCREEN);
      return plan.replayable ? plan.actions : assert.fail(plan.reason);
    };
    assert.deepEqual(byId('C-03'), [{ type: 'answer', text: '46368' }]);
    assert.deepEqual(byId('C-05'), [
      { type: 'hotkey', keys: ['ctrl', 'l'] },
      { type: 'type', text: '~/script.kal', submit: true },
      { type: 'click', x: 100, y: 1031 },
      { type: 'type', text: 'b := vector {root(3, 2), 2}\nc := scalarproduct(a, b)\np := c[1]+c[2]', submit: true },
      { type: 'done' },
    ]);
    assert.deepEqual(byId('B-01'), [{ type: 'hotkey', keys: ['alt', '2'] }, { type: 'type', text: 'x->x^2', submit: true }, { type: 'done' }]);
    assert.deepEqual(byId('B-07'), [
      { type: 'click', x: 100, y: 1031 },
      { type: 'hotkey', keys: ['ctrl', 'a'] },
      { type: 'type', text: '(x, y) -> sin(x^2)+sin(y^2)-e^(sin(x)+sin(y))', submit: true },
      { type: 'done' },
    ]);
    assert.deepEqual(byId('D-02'), [{ type: 'hotkey', keys: ['alt', 'c'] }, { type: 'type', text: 'area := pi*3*4', submit: true }, { type: 'done' }]);
  });

  it('ends with the stop its ans names (FAIL, DONE), and the perturbed plan with the other one', () => {
    assert.deepEqual(referencePlan(A04, SCREEN), { replayable: true, actions: [{ type: 'fail' }] });
    assert.deepEqual(perturbedPlan(A04, SCREEN), { replayable: true, actions: [{ type: 'done' }] });
    const done = { ...A04, evaluate: [{ type: 'stop' as const, value: 'DONE' as const }], ans: 'DONE' };
    assert.deepEqual(referencePlan(done, SCREEN), { replayable: true, actions: [{ type: 'done' }] });
    assert.deepEqual(perturbedPlan(done, SCREEN), { replayable: true, actions: [{ type: 'fail' }] });
  });

  it('changes only the last result in the perturbed plan', () => {
    const task = TASKS.find((t) => t.id === 'C-08') ?? assert.fail('C-08');
    const reference = referencePlan(task, SCREEN);
    const perturbed = perturbedPlan(task, SCREEN);
    assert.ok(reference.replayable && perturbed.replayable);
    assert.deepEqual(perturbed.actions.slice(0, 3), reference.actions.slice(0, 3));
    assert.deepEqual(perturbed.actions[3], { type: 'type', text: 'x->x-2', submit: true });
    assert.deepEqual(reference.actions[3], { type: 'type', text: 'x->x-1', submit: true });
  });

  it('places controls by the screen corner they hang from (measured at 1920x1080 and 1280x800)', () => {
    assert.deepEqual(kalgebraPoint('functionsAddTab', SCREEN), { x: 1707, y: 1043 });
    assert.deepEqual(kalgebraPoint('functionsAddTab', { width: 1280, height: 800 }), { x: 1067, y: 763 });
    assert.deepEqual(kalgebraPoint('calculatorInput', { width: 1280, height: 800 }), { x: 100, y: 751 });
    assert.deepEqual(kalgebraPoint('functionEditor', { width: 1280, height: 800 }), { x: 1137, y: 61 });
  });

  describe('replayed on real KAlgebra', function () {
    this.timeout(60_000);
    const settleMs = loadConfig(path.join(REPO, 'temporal.yaml')).rollouts.settleMs;
    // Two desktops: each task's reference plan plays on one while its perturbed plan plays on the other.
    let desktops: Array<{ desktop: LocalDesktop; dir: string }> = [];

    before(() => {
      desktops = [testDesktop('reference-test', 170), testDesktop('perturbed-test', 175)];
    });

    after(async function () {
      this.timeout(30_000);
      for (const { desktop, dir } of desktops) await closeTestDesktop(desktop, dir);
    });

    for (const task of [...TASKS.filter((t) => !NOT_REPLAYABLE.includes(t.id)), A04]) {
      it(`${task.id}: the reference plan passes every check, the perturbed plan fails`, async () => {
        const replays = ([['reference', referencePlan, true], ['perturbed', perturbedPlan, false]] as const).map(async ([name, planOf, expected], i) => {
          const { desktop } = desktops[i]!;
          const plan = planOf(task, desktop.screen);
          assert.ok(plan.replayable);
          await desktop.reset(task);
          const stop = await play(desktop, plan.actions, settleMs);
          const result = await desktop.evaluate(task, stop);
          return { name, expected, result };
        });
        for (const { name, expected, result } of await Promise.all(replays)) {
          assert.equal(result.checks.length, task.evaluate.length);
          assert.equal(result.passed, expected, `${name} plan: ${result.checks.map((c) => c.detail).join(' | ')}`);
        }
      });
    }
  });
});
