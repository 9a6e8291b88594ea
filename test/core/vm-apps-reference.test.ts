import assert from 'node:assert/strict';
import { perturbedPlanFor, referencePlanFor } from '../../apps/policies';
import { readTask, writesTasksFor, writeTask } from '../../doubles/scripted-models/generated-tasks';
import { mulberry32 } from '../../core/prng';
import { loadTasks } from '../support/desktop';

/** The stop-only reference policy of the VM apps (apps/stop-reference.ts) on their real task files, and the generator double's templates for them. */

const SCREEN = { width: 1920, height: 1080 };
const VM_APPS = ['Celestia', 'ChimeraX', 'GrassGIS', 'Lean'];

describe('reference policies of Celestia, ChimeraX, GRASS GIS and Lean (the stop alone)', () => {
  it('answers an ANS task with its args joined, and perturbs the answer (Celestia C-06, GRASS C-03, ChimeraX C-06)', () => {
    const [c06] = loadTasks('Celestia').filter((t) => t.id === 'C-06');
    assert.deepEqual(referencePlanFor(c06!, SCREEN), { replayable: true, actions: [{ type: 'answer', text: 'TYC 2082-2143-1' }] });
    assert.deepEqual(perturbedPlanFor(c06!, SCREEN), { replayable: true, actions: [{ type: 'answer', text: 'TYC 2082-2143-11' }] });
    const [c03] = loadTasks('GrassGIS').filter((t) => t.id === 'C-03');
    assert.deepEqual(referencePlanFor(c03!, SCREEN), { replayable: true, actions: [{ type: 'answer', text: 'Vigili del Fuoco' }] });
    const [x06] = loadTasks('ChimeraX').filter((t) => t.id === 'C-06');
    assert.deepEqual(perturbedPlanFor(x06!, SCREEN), { replayable: true, actions: [{ type: 'answer', text: '10.39' }] });
  });

  it('fails a FAIL task and perturbs it into DONE; says DONE where only the app state is checked, with no perturbed plan', () => {
    const [b03] = loadTasks('Celestia').filter((t) => t.id === 'B-03');
    assert.deepEqual(referencePlanFor(b03!, SCREEN), { replayable: true, actions: [{ type: 'fail' }] });
    assert.deepEqual(perturbedPlanFor(b03!, SCREEN), { replayable: true, actions: [{ type: 'done' }] });
    const [a01] = loadTasks('GrassGIS').filter((t) => t.id === 'A-01');
    assert.deepEqual(referencePlanFor(a01!, SCREEN), { replayable: true, actions: [{ type: 'done' }] });
    assert.deepEqual(perturbedPlanFor(a01!, SCREEN), { replayable: false, reason: "its checks read the app's state, which no stop changes" });
  });

  it('has no plan for a task without a stop, an ans or a check of the app (a generated task the generator wrote no plan for)', () => {
    const [a01] = loadTasks('ChimeraX').filter((t) => t.id === 'A-01');
    const generated = { ...a01!, evaluate: [], instruction: 'Render a movie of 4tut turning in ChimeraX.' };
    const none = { replayable: false, reason: "no reference answer: no stop check, no ANS, FAIL or DONE in its ans, and no check of the app's state" };
    assert.deepEqual(referencePlanFor(generated, SCREEN), none);
    assert.deepEqual(perturbedPlanFor(generated, SCREEN), none);
    assert.deepEqual(referencePlanFor({ ...generated, ans: 'DONE' }, SCREEN), { replayable: true, actions: [{ type: 'done' }] });
    assert.deepEqual(perturbedPlanFor({ ...generated, ans: 'DONE' }, SCREEN), { replayable: true, actions: [{ type: 'fail' }] });
  });

  it('has a replayable reference plan for every task of the four apps', () => {
    for (const software of VM_APPS) {
      for (const task of loadTasks(software)) assert.equal(referencePlanFor(task, SCREEN).replayable, true, `${software} ${task.id}`);
    }
  });
});

describe('task-generator double templates of the VM apps', () => {
  it('writes tasks for each app that it reads back with the same plan, some with an answer and some unplanned', () => {
    for (const software of VM_APPS) {
      assert.ok(writesTasksFor(software), software);
      const random = mulberry32(7);
      const written = Array.from({ length: 60 }, () => writeTask(software, random));
      for (const task of written) assert.deepEqual(readTask(software, task.instruction), task, `${software}: ${task.instruction}`);
      assert.ok(written.some((t) => t.ans?.startsWith('ANS ')), `${software} asks a question`);
      assert.ok(written.some((t) => t.ans === undefined), `${software} has unplanned tasks`);
    }
    assert.equal(readTask('Lean', 'In Lean 4, evaluate 25 + 7 with #eval in the open file and submit the result as your answer.')?.ans, 'ANS 32');
    assert.equal(readTask('Celestia', 'Open 2olx in ChimeraX and color it bychain.'), undefined);
  });
});
