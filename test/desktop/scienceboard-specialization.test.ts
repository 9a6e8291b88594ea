import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { checkpointManifestKey, taskSetManifestKey } from '../../core/keys';
import { parseTrajectoryManifest, taskSetManifestSchema } from '../../apps/manifests';
import { checkpointManifestSchema, datasetManifestSchema } from '../../core/training';
import { verdictFileSchema } from '../../core/judge/verdict-file';
import { columnTitle, type EvaluationReport } from '../../core/report';
import type { Task } from '../../core/task';
import { OsworldDesktop } from '../../activities/desktop/osworld/osworld-desktop';
import { readTask } from '../../doubles/scripted-models/generated-tasks';
import type { SpecializationResult } from '../../workflows/training/progress';
import { createVmHost, type VmHost } from '../../workers/vm-host';
import { startGpuHarness, type GpuHarness } from '../support/gpu-harness';
import { startDoubledVm, type DoubledVm } from './scienceboard-vm';
import { specializationWorkflowId } from '../../workflows/names';
import { APPS as REGISTRY } from '../../apps/index';

/**
 * CODA's specialization (workflows/training/specialization.ts), one round for each app only a ScienceBoard VM
 * runs — Celestia, ChimeraX, GRASS GIS, Lean — on the real Temporal and MinIO: the task-generator
 * double writes the round's tasks from the app's templates, the rollouts run through the OSWorld
 * adapter on a VM of TEST DOUBLES (scienceboard-vm.ts) with the scripted planner replaying the
 * app's reference policy (the stop), the judge doubles label them, the GRPO dataset of the approved
 * steps trains the OpenRLHF double on a gpu worker, the checkpoint is served as a LoRA adapter and
 * evaluated on two of the app's real tasks, whose test states the VM holds (as the agent would
 * have left them), in a report whose column is the app's domain and name.
 * The harness gives the judge doubles no error rates (their errors are tested in test/judging), so
 * a verdict is the truth: whether the trajectory followed the plan the generator double wrote.
 */

const APPS = ['Celestia', 'ChimeraX', 'GrassGIS', 'Lean'] as const;
const EVALUATION_TASKS = ['A-01', 'A-04'];
/**
 * A fixed name per app (the generator double answers the same prompt the same way, so each app's
 * round writes the same tasks), with the app in it as the demo names its runs: a round's dataset,
 * checkpoint, evaluation and report series are named after the run alone.
 */
const runOf = (software: string): string => `SB-Spec-${software}`;

/** Every message along an error's cause chain. */
const causes = (err: unknown): string => (err instanceof Error ? `${err.message} <- ${causes(err.cause)}` : '');

/** The VM's desktop, which before each reset puts the task's test state in line for the agent's turn (none for a generated task). */
class StatefulVmDesktop extends OsworldDesktop {
  constructor(private readonly vm: DoubledVm, id: string) {
    super(vm.desktopOptions(id));
  }
  override async reset(task: Task): Promise<void> {
    await this.vm.prepare(task, 'pass');
    return super.reset(task);
  }
}

describe('specialization on each ScienceBoard VM app (Celestia, ChimeraX, GRASS GIS, Lean) against the doubles', function () {
  this.timeout(900_000);
  let g: GpuHarness;
  let vm: DoubledVm;
  let host: VmHost;
  let running: Promise<void>;
  const results = new Map<string, SpecializationResult>();

  before(async () => {
    vm = await startDoubledVm();
    g = await startGpuHarness({
      name: 'sbspec',
      runtimeLora: true,
      desktops: 1,
      displayFrom: Number(process.env.CODA_DISPLAY_BASE ?? 400),
      edit: (doc) => {
        doc.hosts = [
          { id: 'sbspec-host', kind: 'osworld', taskQueue: 'sbspec-vm', vms: [vm.vm], resetTimeoutSeconds: 30, readyTimeoutSeconds: 10, initializePauseSeconds: 0, initializeWaitScale: 0 },
        ];
      },
    });
    host = await createVmHost({ config: g.h.config, connection: g.h.stack.connection, hostId: g.h.hostId, env: g.h.env, createDesktop: () => new StatefulVmDesktop(vm, `${g.h.hostId}/0`) });
    running = host.run();
    await g.startGpuWorker();
  });

  after(async () => {
    host?.shutdown();
    await running;
    await g?.stop();
    await vm?.close();
  });

  for (const software of APPS) {
    it(`${software}: one round generates tasks, rolls them out on the VM, judges, trains, serves and evaluates the specialist on the app's real tasks`, async () => {
      const run = runOf(software);
      const result = await g.h.execute<SpecializationResult>('specialization', specializationWorkflowId(software, run), {
        software,
        run,
        rounds: 1,
        // A third of the templates of an app have no plan: three tasks, so that the judge has a step to approve.
        tasksPerRound: 3,
        attempts: 1,
        includeSeeds: false,
        evaluationAttempts: 1,
        evaluationTaskIds: EVALUATION_TASKS,
      });
      results.set(software, result);
      const store = g.h.stack.store;
      const prefix = g.h.config.storage.prefix;
      assert.equal(result.rounds, 1);
      const [round] = result.history;
      assert.ok(round !== undefined);
      // The round's task set: tasks of this app the generator double wrote.
      const set = taskSetManifestSchema.parse(await store.getJson(taskSetManifestKey(prefix, software, `${run}-r1`)));
      assert.ok(set.tasks.length > 0, `tasks generated: ${JSON.stringify({ counts: set.counts, invalid: set.invalid, duplicates: set.duplicates })}`);
      assert.equal(set.software, software);
      assert.equal(round.tasks, set.tasks.length);
      assert.deepEqual(round.sources, [`${run}-r1-gen`]);
      assert.equal(round.rollouts, round.tasks + EVALUATION_TASKS.length, 'one attempt of every generated task, and of every real task by the base row (to measure the judge, then reused by the evaluation)');
      assert.equal(round.judged, round.rollouts, 'every rollout judged');
      // The real tasks pass on the VM's test states and the judge doubles are exact: a precision and recall of 1.
      assert.deepEqual(
        [round.judge?.run, round.judge?.final.trajectories, round.judge?.final.passed, round.judge?.final.precision, round.judge?.final.recall],
        [`${run}-base-eval`, EVALUATION_TASKS.length, EVALUATION_TASKS.length, 1, 1],
      );

      // The rollouts ran on the VM host, on generated tasks of this app, and each has its verdict.
      const manifests = (await store.list(`${prefix}/runs/${run}-r1-gen/${software}/`)).filter((k) => k.endsWith('/manifest.json'));
      assert.equal(manifests.length, round.tasks);
      let approved = 0;
      for (const key of manifests) {
        const trajectory = parseTrajectoryManifest(await store.getJson(key), key);
        assert.equal(trajectory.software, software);
        assert.equal(trajectory.desktop.host, g.h.hostId);
        assert.equal(trajectory.task.evaluated, false, 'a generated task is judged, not evaluated');
        const verdict = verdictFileSchema.parse(await store.getJson(key.replace(/manifest\.json$/, 'verdict.json')));
        // The truth the judge doubles tell: the trajectory followed the generator's plan (a stop), or the task had none.
        const plan = readTask(software, trajectory.task.instruction)?.ans;
        assert.equal(verdict.success, plan !== undefined, `${software} "${trajectory.task.instruction}": ${verdict.stoppedBecause}`);
        if (verdict.success) {
          assert.deepEqual(verdict.positiveSteps, [1]);
          approved += 1;
        }
      }
      assert.ok(approved > 0, `the judge approved a step of ${software}`);

      // The GRPO dataset of the approved steps trained the OpenRLHF double; the checkpoint is served.
      assert.equal(round.skipped, undefined, `round trained: ${JSON.stringify(round)}`);
      assert.equal(round.positiveSteps, approved);
      assert.equal(round.samples, approved);
      assert.equal(result.specialist.name, round.checkpoint);
      const checkpoint = checkpointManifestSchema.parse(await store.getJson(checkpointManifestKey(prefix, round.checkpoint)));
      assert.equal(checkpoint.kind, 'grpo');
      assert.equal(checkpoint.double, true);
      const dataset = datasetManifestSchema.parse(await store.getJson(checkpoint.dataset));
      assert.deepEqual(dataset.software, [software]);
      assert.equal(dataset.rows, approved);
      const models = (await (await fetch(`${g.h.models.url}/models`)).json()) as { data: Array<{ id: string }> };
      assert.ok(models.data.some((m) => m.id === result.specialist.model), `${result.specialist.model} is served`);

      // The specialist evaluated on the app's real tasks, on the VM holding their states: both pass.
      const report = await store.getJson<EvaluationReport>(round.reportKey);
      assert.deepEqual(report.softwares, [software]);
      assert.deepEqual(report.rows.map((r) => [r.planner, r.model]), [['base', g.h.config.training.basePlanner.model], [`specialist-${software}`, result.specialist.model]]);
      assert.deepEqual(report.rows[1]?.metrics.tasks.map((t) => [t.taskId, t.runs, t.successes]), EVALUATION_TASKS.map((id) => [id, 1, 1]));
      assert.equal(round.averageAtK, 100);
      const markdown = (await store.get(round.reportKey.replace(/\.json$/, '.md'))).toString('utf8');
      const title = { Celestia: 'Astronomy (Celestia)', ChimeraX: 'Biochemistry (ChimeraX)', GrassGIS: 'GIS (GRASS GIS)', Lean: 'Theorem proving (Lean)' }[software];
      assert.equal(columnTitle(REGISTRY, software), title);
      assert.match(markdown, new RegExp(`\\| Planner \\| ${title.replace(/[()]/g, '\\$&')} \\| Overall \\|`));
    });
  }

  it('refuses to train a second app on a run name the first used, naming the dataset, instead of training on the first app\'s data', async () => {
    assert.ok(results.has('Celestia'), 'needs the Celestia round');
    const run = runOf('Celestia');
    const err = await g.h
      .execute('specialization', specializationWorkflowId('Lean', run), { software: 'Lean', run, rounds: 1, tasksPerRound: 2, attempts: 1, includeSeeds: false, evaluationAttempts: 1, evaluationTaskIds: EVALUATION_TASKS })
      .then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError, `failed: ${String(err)}`);
    assert.match(causes(err), new RegExp(`dataset "${run}-r1" exists .* with trajectories of ${run}-r1-gen/Celestia, which this request \\(${run}-r1-gen/Lean\\) does not name`));
    const checkpoint = checkpointManifestSchema.parse(await g.h.stack.store.getJson(checkpointManifestKey(g.h.config.storage.prefix, `${run}-r1`)));
    assert.deepEqual(datasetManifestSchema.parse(await g.h.stack.store.getJson(checkpoint.dataset)).software, ['Celestia'], 'the Celestia checkpoint is as it was');
  });

  it('ran the generated and the real tasks on the VM\'s app doubles', () => {
    assert.equal(results.size, APPS.length);
    assert.ok(vm.reverts() >= [...results.values()].reduce((n, r) => n + (r.history[0]?.rollouts ?? 0) + EVALUATION_TASKS.length, 0));
    assert.ok(vm.celestia.queries.length > 0, 'Celestia evaluated through its /dump with the task\'s query');
    assert.ok(vm.grass.requests.length > 0);
    assert.ok(vm.chimerax.commands.length > 0);
    assert.ok(vm.server.requests.some((r) => r.path === '/lean/check'));
  });
});
