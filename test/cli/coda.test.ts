import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { TaskCensus } from '../../activities/tasks/census';
import { startHarness, type Harness } from '../support/harness';
import { eventually } from '../support/rollouts';

const CODA = path.resolve(__dirname, '..', '..', 'cli', 'coda.js');
const run = promisify(execFile);

describe('the coda CLI, run as its own process against the real stack', function () {
  this.timeout(600_000);
  let h: Harness;
  let out: string;
  const stamp = Date.now();
  const batchRun = `cli${stamp}`;
  const scheduleId = `cli-nightly-${stamp}`;

  /** Runs `coda args...`; resolves with its output and exit code (it never rejects). */
  const coda = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run(process.execPath, [CODA, ...args], { env: h.env, timeout: 300_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };
  const ok = async (...args: string[]): Promise<string> => {
    const result = await coda(...args);
    assert.equal(result.code, 0, `coda ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    h = await startHarness({
      name: 'cli',
      desktops: 2,
      displayFrom: 320,
      models: (doc) => {
        doc.models.judges = [{ name: 'judge-a', baseUrl: '${CODA_JUDGE_A_URL}', model: 'judge-a' }];
        doc.judging.plan = { lowResolutionVotes: 1, highResolutionVotes: 1, judges: ['judge-a'] };
        doc.judging.strategies = [{ label: 'single', title: 'Single vote', plan: { lowResolutionVotes: 0, highResolutionVotes: 1, judges: ['judge-a'] } }];
        doc.dev.scriptedModels.judges = { 'judge-a': { high: { falsePositive: 0, falseNegative: 0 }, low: { falsePositive: 0, falseNegative: 0 }, unreadable: 0 } };
      },
      edit: (doc) => (doc.schedules = [{ id: scheduleId, cron: '0 2 * * *', workflow: 'evaluation', taskQueue: 'orchestrator', input: { series: `cli-sched-${stamp}`, attempts: 1, taskIds: { KAlgebra: ['C-03'] } } }]),
    });
    await h.startVmHost();
    out = mkdtempSync(path.join(tmpdir(), 'coda-cli-'));
  });
  after(async () => {
    await h?.stack.client.schedule.getHandle(scheduleId).delete().catch(() => undefined);
    await h?.stop();
    if (out !== undefined) rmSync(out, { recursive: true, force: true });
  });

  it('starts a batch, waits with a progress bar, and prints its id, Web UI link and result', async () => {
    const stdout = await ok('start', 'batch', '--software', 'KAlgebra', '--tasks', 'C-03,A-01', '--run', batchRun, '--wait');
    assert.match(stdout, new RegExp(`^started rolloutBatch batch-${batchRun}-KAlgebra\\n  http://127\\.0\\.0\\.1:\\d+/namespaces/${h.config.temporal.namespace}/workflows/batch-${batchRun}-KAlgebra\\n`));
    const result = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { passed: number; completed: number };
    assert.deepEqual({ completed: result.completed, passed: result.passed }, { completed: 2, passed: 2 });
  });

  it('shows progress, a readable history and the runs of a run', async () => {
    const progress = JSON.parse(await ok('progress', `batch-${batchRun}-KAlgebra`)) as { completed: number; total: number };
    assert.deepEqual({ completed: progress.completed, total: progress.total }, { completed: 2, total: 2 });

    const history = await ok('history', `batch-${batchRun}-KAlgebra`);
    assert.match(history, new RegExp(`^batch-${batchRun}-KAlgebra: COMPLETED, \\d+ events\\n`));
    assert.match(history, /started rolloutBatch on cli-orchestrator/);
    assert.match(history, /local activity resolveBatchInput/);
    assert.match(history, /activity stageTaskSet: completed in/);
    assert.match(history, new RegExp(`child rollout-${batchRun}-KAlgebra-C-03-0 \\(rollout\\) started`));
    assert.match(history, new RegExp(`child rollout-${batchRun}-KAlgebra-A-01-0 completed in`));
    assert.match(history, /activities: 2 \(0 retried, 0 failed or timed out\); local activities: 1; child workflows: 2 \(0 did not complete\)/);
    assert.match(history, /failures: none/);

    const rows = await eventually('the run in visibility', async () => {
      const listed = await ok('runs', '--run', batchRun);
      return listed.trim().split('\n').length === 4 ? listed : undefined;
    }, 30_000);
    assert.match(rows, /^WORKFLOW ID\s+TYPE\s+STATUS\s+SOFTWARE\s+STAGE\s+RUN\s+ROUND\s+STARTED \(UTC\)/);
    assert.match(rows, new RegExp(`batch-${batchRun}-KAlgebra\\s+rolloutBatch\\s+COMPLETED\\s+KAlgebra\\s+evaluation\\s+${batchRun}`));
    const json = (await ok('runs', '--run', batchRun, '--type', 'rollout', '--json')).trim().split('\n').map((l) => JSON.parse(l) as { type: string; status: string });
    assert.deepEqual(json.map((r) => [r.type, r.status]), [['rollout', 'COMPLETED'], ['rollout', 'COMPLETED']]);
  });

  it('fetches a trajectory as local files', async () => {
    const dir = path.join(out, 'trajectory');
    const stdout = await ok('fetch', 'trajectory', `${batchRun}/KAlgebra/C-03/0`, '--out', dir);
    assert.match(stdout, /^\d+ files \(\d+ KiB\) from s3:\/\/coda\/coda\/runs\/cli\d+\/KAlgebra\/C-03\/0\/ into /);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { taskId: string; steps: unknown[] };
    assert.equal(manifest.taskId, 'C-03');
    assert.ok(existsSync(path.join(dir, 'steps', '0000', 'screenshot.png')));
  });

  it('runs an evaluation and fetches its report; compares judge strategies and prints the table', async () => {
    const series = `cli-series-${stamp}`;
    const started = await ok('start', 'evaluation', '--series', series, '--software', 'KAlgebra', '--tasks', 'KAlgebra:C-03', '--attempts', '1', '--wait');
    assert.match(started, /"rows": \[/);
    const fetched = await ok('fetch', 'report', series, '--out', path.join(out, 'report'));
    const files = fetched.trim().split('\n');
    assert.equal(files.length, 2);
    assert.match(readFileSync(files.find((f) => f.endsWith('.md'))!, 'utf8'), /## Average@1 \(%\)/);

    const table = await ok('judge-eval', '--run', batchRun, '--software', 'KAlgebra');
    assert.match(table, /\| Strategy \| Precision \(%\) \| Recall \(%\) \|/);
    assert.match(table, /\| Single vote \| 100\.0 \| 100\.0 \| 2 \/ 0 \/ 0 \/ 0 \| 1\.00 \|/);
    assert.match(table, /report: s3:\/\/coda\/coda\/judge-evals\/je-/);
  });

  it('manages the schedules of temporal.yaml', async () => {
    assert.equal(await ok('schedules', 'create'), `created ${scheduleId} (0 2 * * *, evaluation)\n`);
    assert.match(await ok('schedules', 'list'), new RegExp(`${scheduleId}\\s+evaluation\\s+0 2 \\* \\* \\*\\s+active`));
    assert.equal(await ok('schedules', 'pause', scheduleId, '--note', 'maintenance'), `paused ${scheduleId}\n`);
    assert.match(await ok('schedules', 'list'), new RegExp(`${scheduleId}\\s+evaluation\\s+0 2 \\* \\* \\*\\s+paused`));
    assert.equal(await ok('schedules', 'unpause', scheduleId), `unpaused ${scheduleId}\n`);
    assert.equal(await ok('schedules', 'trigger', scheduleId), `triggered ${scheduleId}\n`);
    const started = await eventually('the triggered run', async () => (await h.stack.client.schedule.getHandle(scheduleId).describe()).info.recentActions[0]?.action.workflow.workflowId);
    await h.stack.client.workflow.getHandle(started).result();
  });

  it('terminates, retries and cancels workflows', async () => {
    const longRun = `clilong${stamp}`;
    await ok('start', 'batch', '--software', 'KAlgebra', '--tasks', 'A-01,C-01,C-04', '--attempts', '3', '--run', longRun);
    const id = `batch-${longRun}-KAlgebra`;
    assert.equal(await ok('terminate', id, '--reason', 'testing'), `terminated ${id}\n`);
    assert.equal((await h.stack.client.workflow.getHandle(id).describe()).status.name, 'TERMINATED');
    assert.match(await ok('history', id), /terminated: testing/);
    assert.match(await ok('retry', id), new RegExp(`^retrying ${id} from its start as run [0-9a-f-]+\\n`));
    const result = (await h.stack.client.workflow.getHandle(id).result()) as { completed: number };
    assert.equal(result.completed, 9, 'the retried batch finished every rollout, reusing those that had run');

    const other = `clicancel${stamp}`;
    await ok('start', 'batch', '--software', 'KAlgebra', '--tasks', 'A-01,C-01', '--attempts', '2', '--run', other);
    assert.equal(await ok('cancel', `batch-${other}-KAlgebra`), `cancellation requested for batch-${other}-KAlgebra\n`);
    const status = await eventually('the batch canceled', async () => {
      const name = (await h.stack.client.workflow.getHandle(`batch-${other}-KAlgebra`).describe()).status.name;
      return name === 'RUNNING' ? undefined : name;
    });
    assert.equal(status, 'CANCELLED');
  });

  it('refuses bad input with exit code 2, naming the option, and starts nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['start', 'batch', '--software', 'Excel'], /--software: unknown software "Excel": expected one of Celestia, ChimeraX, GrassGIS, KAlgebra, Lean, TeXstudio/],
      [['start', 'batch'], /required option '--software <name>' not specified/],
      [['start', 'evaluation', '--attempts', '0'], /^evaluation input is invalid:\n {2}- attempts: expected an integer >= 1/],
      [['start', 'evaluation', '--tasks', 'A-01'], /--tasks: expected SOFTWARE:ID,ID/],
      [['start', 'task-generation', '--software', 'KAlgebra', '--count', 'many'], /--count: expected an integer, got "many"/],
      [['start', 'specialization', '--software', 'KAlgebra', '--rounds', '0'], /^specialization input is invalid:\n {2}- rounds: expected an integer >= 1/],
      [['start', 'specialization', '--software', 'KAlgebra', '--judge-precision-floor', '1.5'], /^specialization input is invalid:\n {2}- judgePrecisionFloor: expected a precision from 0 to 1/],
      [['start', 'specialization', '--software', 'KAlgebra', '--judge-precision-floor', 'high'], /--judge-precision-floor: expected a number from 0 to 1, got "high"/],
      [['start', 'specialization', '--software', 'KAlgebra', '--max-staleness', '2'], /^specialization input is invalid:\n {2}- maxStaleness: expected 0 or 1 \(a staleness of 2 or more is not supported yet\)/],
      // The judge is measured on the evaluation's rollouts of the real tasks: no rollout count of its own.
      [['start', 'specialization', '--software', 'KAlgebra', '--real-task-attempts', '1'], /unknown option '--real-task-attempts'/],
      [['start', 'generalization', '--specialist', 'KAlgebra=k-r1', '--evaluation-tasks', 'A-01'], /--evaluation-tasks: expected SOFTWARE:ID,ID/],
      [['start', 'generalization', '--specialist', 'KAlgebra=k-r1', '--evaluation-tasks', 'TeXstudio:A-01'], /evaluationTaskIds\.TeXstudio: "TeXstudio" has no specialist here/],
      [['start', 'judge', '--trajectory', 'nope'], /trajectory: expected RUN\/SOFTWARE\/TASK\/ATTEMPT or a manifest key/],
      [['runs', '--status', 'bogus'], /argument 'bogus' is invalid\. Allowed choices are running, completed/],
      [['fetch', 'trajectory', `${batchRun}/KAlgebra/Z-99/0`, '--out', out], /no trajectory at s3:\/\/coda\/coda\/runs\/.*\/Z-99\/0\/manifest\.json/],
      [['fetch', 'report', 'no-such-series', '--out', out], /the series "no-such-series" has no report yet/],
    ];
    for (const [args, expected] of cases) {
      const result = await coda(...args);
      assert.equal(result.code, 2, `coda ${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, expected, args.join(' '));
    }
    const [batch] = await Promise.all([coda('progress', 'no-such-workflow')]);
    assert.equal(batch.code, 1);
    assert.match(batch.stderr, /no-such-workflow/);
  });
});

describe('coda tasks: a folder of task files, what parses and which hosts run it (no stack needed)', function () {
  this.timeout(120_000);
  const REPO = path.resolve(__dirname, '..', '..', '..');
  const DATA = path.join(REPO, 'data', 'scienceboard');
  let folder: string;

  before(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'coda-tasks-'));
    mkdirSync(path.join(folder, 'TeXstudio'));
    mkdirSync(path.join(folder, 'KAlgebra'));
    for (const id of ['A-01', 'B-01', 'C-03', 'D-01']) copyFileSync(path.join(DATA, 'TeXstudio', `${id}.json`), path.join(folder, 'TeXstudio', `${id}.json`));
    copyFileSync(path.join(DATA, 'KAlgebra', 'A-01.json'), path.join(folder, 'KAlgebra', 'A-01.json'));
    // A document with a package no TeX installation has: derived, reported by name.
    const d01 = JSON.parse(readFileSync(path.join(DATA, 'TeXstudio', 'D-01.json'), 'utf8')) as { initialize: Array<{ func: string; text?: string }> };
    const touch = d01.initialize.find((s) => s.func === 'touch');
    assert.ok(touch?.text !== undefined);
    touch.text = touch.text.replace('\\begin{document}', '\\usepackage{no-such-package-coda}\n\\begin{document}');
    writeFileSync(path.join(folder, 'TeXstudio', 'Z-01.json'), JSON.stringify(d01));
    writeFileSync(path.join(folder, 'KAlgebra', 'Z-02.json'), '{"type": "KAlgebra", "instruction": ');
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  const tasks = async (...args: string[]): Promise<string> => (await run(process.execPath, [CODA, 'tasks', '--config', path.join(REPO, 'temporal.yaml'), ...args], { timeout: 60_000 })).stdout;

  it('prints per application the files, how many parse, and how many each host and host kind runs, with the reasons grouped', async () => {
    const stdout = await tasks('--folder', folder);
    const lines = stdout.split('\n');
    assert.equal(lines[0]?.replace(/\s+/g, ' '), 'software files parsed local-1 local osworld*');
    assert.equal(lines[1]?.replace(/\s+/g, ' '), 'KAlgebra 2 1 1 1 1');
    assert.equal(lines[2]?.replace(/\s+/g, ' '), 'TeXstudio 5 5 2 2 5');
    assert.equal(lines[3]?.replace(/\s+/g, ' '), 'total 7 6 3 3 6');
    assert.match(stdout, /^why not on local-1:\n {2}TeXstudio: 1 needs ChimeraX \(A-01\)\n {2}TeXstudio: 1 needs files of ScienceBoard's VM snapshot \(C-03\)\n {2}TeXstudio: 1 needs the internet \(A-01\)\n {2}TeXstudio: 1 needs the TeX file no-such-package-coda\.sty \(Z-01\)\n {2}TeXstudio: 1 needs the TeX files kpfonts\.sty, beramono\.sty \(C-03\)$/m);
    assert.doesNotMatch(stdout, /why not on osworld/);
    assert.match(stdout, /^1 files do not parse:\n {2}KAlgebra\/Z-02\.json: .*JSON/m);
  });

  it('gives everything, per task too, as JSON, and the README table as Markdown', async () => {
    const census = JSON.parse(await tasks('--folder', folder, '--json')) as TaskCensus;
    assert.deepEqual(census.columns, [
      { name: 'local-1', kind: 'local', inDeployment: true },
      { name: 'local', kind: 'local', inDeployment: true },
      { name: 'osworld', kind: 'osworld', inDeployment: false },
    ]);
    const texstudio = census.applications.find((a) => a.software === 'TeXstudio');
    assert.deepEqual(texstudio?.tasks, [
      { id: 'A-01', supportedBy: ['osworld'] },
      { id: 'B-01', supportedBy: ['local-1', 'local', 'osworld'] },
      { id: 'C-03', supportedBy: ['osworld'] },
      { id: 'D-01', supportedBy: ['local-1', 'local', 'osworld'] },
      { id: 'Z-01', supportedBy: ['osworld'] },
    ]);
    const markdown = await tasks('--folder', DATA, '--markdown');
    assert.match(markdown, /^\| software \| files \| parsed \| local-1 \| local \| osworld\* \|\n\| --- \| ---: \| ---: \| ---: \| ---: \| ---: \|\n/);
    assert.match(markdown, /^\| KAlgebra \| 20 \| 20 \| 20 \| 20 \| 20 \|$/m);
    assert.match(markdown, /^\| TeXstudio \| 12 \| 12 \| 4 \| 4 \| 12 \|$/m);
    for (const row of ['Celestia | 22 | 22', 'ChimeraX | 20 | 20', 'GrassGIS | 23 | 23', 'Lean | 18 | 18']) assert.match(markdown, new RegExp(`^\\| ${row.replace(/\|/g, '\\|')} \\| 0 \\| 0 \\| \\d+ \\|$`, 'm'), row);
    assert.match(markdown, /^\| total \| 115 \| 115 \| 24 \| 24 \| 115 \|$/m);
  });

  it('refuses a folder that does not exist with exit code 2', async () => {
    await assert.rejects(tasks('--folder', path.join(folder, 'nope')), (err: { code?: number; stderr?: string }) => err.code === 2 && /no folder .*nope/.test(err.stderr ?? ''));
  });

  it("prints a task file's control characters as \\u escapes, in the table, the Markdown, the JSON and the errors: none reaches the terminal", async () => {
    const hostile = mkdtempSync(path.join(tmpdir(), 'coda-tasks-hostile-'));
    try {
      // OSC (window title, then BEL), ESC [2J (clear the screen), C1 CSI, a carriage return.
      const func = '\u001b]0;owned\u0007\u001b[2J\u009b31m\r';
      const task = JSON.parse(readFileSync(path.join(DATA, 'KAlgebra', 'A-01.json'), 'utf8')) as { initialize: Array<{ func: string }> };
      task.initialize = [{ func }];
      mkdirSync(path.join(hostile, 'KAlgebra'));
      writeFileSync(path.join(hostile, 'KAlgebra', 'Z-03.json'), JSON.stringify(task));
      // A file name the loader refuses as a task id: its error line carries it.
      writeFileSync(path.join(hostile, 'KAlgebra', 'Z-\u001b[8m.json'), JSON.stringify(task));
      const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
      const written = '\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u000d';
      for (const format of [[], ['--markdown']]) {
        const stdout = await tasks('--folder', hostile, ...format);
        assert.doesNotMatch(stdout.replace(/\n/g, ''), control, format.join(' '));
        assert.ok(stdout.includes(written), `${format.join(' ')}: ${stdout}`);
        assert.ok(stdout.includes('KAlgebra/Z-\\u001b[8m.json: task id "Z-\\u001b[8m" is not a valid id'), `${format.join(' ')}: the file name`);
      }
      const json = await tasks('--folder', hostile, '--json');
      assert.doesNotMatch(json.replace(/\n/g, ''), control);
      const census = JSON.parse(json) as TaskCensus;
      const reasons = census.applications.flatMap((a) => a.support.flatMap((s) => s.reasons));
      assert.ok(reasons.some((r) => r.reason.includes(func) && r.tasks.includes('Z-03')), 'the JSON still says exactly what the file holds');
      assert.deepEqual(census.applications[0]?.errors.map((e) => e.file), ['Z-\u001b[8m.json']);
      await assert.rejects(tasks('--folder', path.join(hostile, '\u001b[2Jnope')), (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 2);
        assert.doesNotMatch((err.stderr ?? '').replace(/\n/g, ''), control);
        assert.match(err.stderr ?? '', /no folder .*\\u001b\[2Jnope/);
        return true;
      });
    } finally {
      rmSync(hostile, { recursive: true, force: true });
    }
  });
});
