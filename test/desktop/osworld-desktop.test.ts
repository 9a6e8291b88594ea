import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { parseConfig } from '../../config/load';
import type { OsworldHostConfig, OsworldVmConfig } from '../../config/schema';
import { FAILURES } from '../../core/failures';
import { parseTask, parseTaskText, type Task } from '../../core/task';
import { referencePlan } from '../../apps/kalgebra/reference';
import { stopReasonOf } from '../../core/episode';
import { createDesktopActivities, type StepInput, type StepOutcome } from '../../activities/desktop/activities';
import { DesktopError, DesktopLostError } from '../../activities/desktop/desktop';
import { createOsworldClient } from '../../io/osworld-client';
import { createKalgebraState } from '../../apps/kalgebra/vm';
import {
  appStateUrl,
  createOsworldDesktop,
  createOsworldDesktops,
  OsworldDesktop,
  PORT_PLACEHOLDER,
  type OsworldDesktopOptions,
} from '../../activities/desktop/osworld/osworld-desktop';
import { CommandVmProvider, type VmProvider } from '../../activities/desktop/osworld/vm-provider';
import { DesktopPool, LeaseLostError } from '../../activities/desktop/pool';
import { s3TaskReader } from '../../activities/tasks/library';
import { freePort } from '../../infra/ephemeral';
import { testStack } from '../stack';
import { startKalgebraStateDouble, type KalgebraStateDouble } from '../../apps/kalgebra/double';
import { startOsworldServerDouble, type ExecuteAnswer, type OsworldServerDouble } from '../../doubles/osworld-server';
import { kalgebraGui } from '../../apps/kalgebra/gui-double';
import { pngSize, rejectsWith } from '../support/desktop';
import { APPS } from '../../apps/index';

const REPO = path.resolve(__dirname, '..', '..', '..');

function loadTask(id: string): Task {
  return parseTaskText(APPS, readFileSync(path.join(REPO, 'data', 'scienceboard', 'KAlgebra', `${id}.json`), 'utf8'), id);
}

/** TEST DOUBLE of the VM's pyautogui (absent here): every pyautogui command succeeds, or fails as told. */
function pyautoguiStandIn(failure?: ExecuteAnswer): (command: unknown) => ExecuteAnswer | undefined {
  return (command) => {
    const code = Array.isArray(command) && typeof command[2] === 'string' ? command[2] : '';
    if (!code.includes('import pyautogui')) return undefined;
    return failure ?? { output: '', error: '', returncode: 0 };
  };
}

/** Residuals of the curves the tasks below plot (what KAlgebra would draw). */
const CURVES = {
  'x->e^x-1': ([x = 0, y = 0]: readonly number[]) => y - (Math.exp(x) - 1),
  'x->e^x': ([x = 0, y = 0]: readonly number[]) => y - Math.exp(x),
  'q->6*sin(3*q)': ([x = 0, y = 0]: readonly number[]) => y - 6 * Math.sin(3 * x),
};

describe('CommandVmProvider (real commands)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'coda-vm-provider-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const vmWith = (resetCommand: string[]): OsworldVmConfig => ({
    url: 'http://10.0.3.11:5000',
    resetCommand,
    screen: { width: 1920, height: 1080 },
    appStatePort: 8000,
  });

  it('runs the resetCommand argv without a shell', async () => {
    const marker = path.join(dir, 'reverted');
    const snapshot = `sci bench'; touch ${dir}/pwned $(id)`;
    await new CommandVmProvider(5000).revert(vmWith(['sh', '-c', 'printf %s "$1" > "$0"', marker, snapshot]));
    assert.equal(await readFile(marker, 'utf8'), snapshot);
    await assert.rejects(readFile(path.join(dir, 'pwned')), { code: 'ENOENT' });
  });

  it('fails with the VM, the command, its exit code and stderr', async () => {
    await assert.rejects(new CommandVmProvider(5000).revert(vmWith(['sh', '-c', 'echo "no snapshot sci_bench" >&2; exit 3'])), {
      message: `reset command for http://10.0.3.11:5000 (sh -c "echo \\"no snapshot sci_bench\\" >&2; exit 3") exited with 3: no snapshot sci_bench`,
    });
  });

  it('kills a command that outlives its timeout', async () => {
    const started = Date.now();
    await assert.rejects(new CommandVmProvider(200).revert(vmWith(['sleep', '10'])), {
      message: 'reset command for http://10.0.3.11:5000 (sleep 10) did not finish within 0.2 s',
    });
    assert.ok(Date.now() - started < 5000);
  });

  it('names a program that does not exist', async () => {
    await assert.rejects(new CommandVmProvider(5000).revert(vmWith(['/nonexistent/vmrun', 'revertToSnapshot'])), {
      message: 'reset command for http://10.0.3.11:5000 (/nonexistent/vmrun revertToSnapshot) cannot run /nonexistent/vmrun: not found',
    });
  });
});

describe('OsworldDesktop (in-VM server and KAlgebra state-server test doubles)', () => {
  let vmServer: OsworldServerDouble;
  let kalgebra: KalgebraStateDouble;
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'coda-osworld-desktop-'));
    vmServer = await startOsworldServerDouble({ execute: pyautoguiStandIn() });
    kalgebra = await startKalgebraStateDouble({ curves: CURVES });
  });

  afterEach(async () => {
    await vmServer.close();
    await kalgebra.close();
    await rm(dir, { recursive: true, force: true });
  });

  function desktopFor(
    options: {
      url?: string;
      provider?: VmProvider;
      readyTimeoutMs?: number;
      resetScript?: string;
      appReadyTimeoutMs?: number;
      screenshotBackoffMs?: number;
      timeoutMs?: number;
    } = {},
  ): OsworldDesktop {
    const vm: OsworldVmConfig = {
      url: options.url ?? vmServer.url,
      resetCommand: ['sh', '-c', 'echo reverted >> "$0"', path.join(dir, 'reverts')],
      screen: { width: 1280, height: 800 },
      appStatePort: kalgebra.port,
    };
    return new OsworldDesktop({
      id: 'rack-1/0',
      vm,
      provider: options.provider ?? new CommandVmProvider(5000),
      client: createOsworldClient(vm.url, { retries: 1, backoffMs: 10, timeoutMs: options.timeoutMs }),
      appState: createKalgebraState(appStateUrl(vm), { retries: 2, backoffMs: 10 }),
      readyTimeoutMs: options.readyTimeoutMs ?? 3000,
      pollIntervalMs: 50,
      stepPauseMs: 0,
      resetScript: options.resetScript ?? path.join(dir, 'no-reset.sh'),
      appReadyTimeoutMs: options.appReadyTimeoutMs ?? 3000,
      screenshotAttempts: 3,
      screenshotBackoffMs: options.screenshotBackoffMs ?? 10,
    });
  }

  describe('reset', () => {
    it('reverts, then replays launch (port filled in), tab and func_2d of task B-04', async function () {
      this.timeout(10_000); // the task's launch step waits 2.5 s
      const task = loadTask('B-04');
      const desktop = desktopFor();
      const started = Date.now();
      await desktop.reset(task);

      assert.equal(await readFile(path.join(dir, 'reverts'), 'utf8'), 'reverted\n');
      const launch = vmServer.requests.find((r) => r.path === '/setup/launch');
      assert.deepEqual(JSON.parse(launch?.body ?? 'null'), {
        command: `LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra ${kalgebra.port}`,
        shell: true,
      });
      assert.ok(Date.now() - started >= 2500, 'the launch step asks to wait 2.5 s');
      assert.equal(kalgebra.tab(), 1);
      assert.deepEqual(kalgebra.plotted.map((p) => [p.expr, p.dimensions]), [['x->e^x-1', 2]]);
      const add = kalgebra.requests.find((r) => r.path === '/add/2d');
      assert.equal(add?.body, 'x->e^x-1');
      const tab = kalgebra.requests.find((r) => r.path === '/tab');
      assert.deepEqual([tab?.body, tab?.contentType], ['1', 'application/json']);
      assert.ok(vmServer.requests.findIndex((r) => r.path === '/platform') < vmServer.requests.findIndex((r) => r.path === '/setup/launch'));
      assert.deepEqual(kalgebra.requests.at(-1), { method: 'GET', path: '/version', contentType: '', body: '' }, 'the app is probed after the steps');

      const result = await desktop.evaluate(task, { reason: 'DONE' });
      assert.equal(result.passed, true, JSON.stringify(result.checks));
      assert.match(result.checks[0]?.detail ?? '', /plotted function 1 of 1 agrees on all 11 entries/);
    });

    it('runs a touch step through /write and a shell launch with «PORTLIKE» replaced', async () => {
      const base = loadTask('C-05');
      const portFile = path.join(dir, 'port.txt');
      const script = path.join(dir, 'script.kal');
      const task: Task = {
        ...base,
        initialize: [
          { func: 'launch', command: `echo ${PORT_PLACEHOLDER} > '${portFile}'`, shell: true, wait: 0.2 },
          { func: 'touch', text: 'a := vector{-1, root(3, 3)}', path: script },
        ],
      };
      await desktopFor().reset(task);
      assert.equal(await readFile(script, 'utf8'), 'a := vector{-1, root(3, 3)}');
      assert.equal(await readFile(portFile, 'utf8'), `${kalgebra.port}\n`);
    });

    it('runs the VM\'s reset script through /setup/execute after the revert, before the task\'s steps (as ScienceBoard does)', async () => {
      const script = path.join(dir, 'reset.sh');
      await writeFile(script, `echo "network restarted" >> '${path.join(dir, 'reset.log')}'\n`);
      const task: Task = { ...loadTask('C-05'), initialize: [{ func: 'touch', text: 'x', path: path.join(dir, 'touched') }] };
      await desktopFor({ resetScript: script }).reset(task);
      assert.equal(await readFile(path.join(dir, 'reset.log'), 'utf8'), 'network restarted\n');
      const setup = vmServer.requests.find((r) => r.path === '/setup/execute');
      assert.deepEqual(JSON.parse(setup?.body ?? 'null'), { command: ['/bin/bash', script], shell: false });
      const order = vmServer.requests.map((r) => r.path).filter((p) => p !== '/execute');
      assert.ok(order.indexOf('/setup/execute') < order.indexOf('/write'), order.join(' '));
    });

    it('fails the reset as the VM\'s fault when the app never answers /version, though its launch through a shell answered 200', async () => {
      await kalgebra.close();
      const [launch] = loadTask('A-01').initialize;
      assert.ok(launch?.func === 'launch' && launch.shell === true);
      const task: Task = { ...loadTask('A-01'), initialize: [{ ...launch, wait: 0 }] };
      const err = await rejectsWith(desktopFor({ appReadyTimeoutMs: 300 }).reset(task), DesktopError);
      assert.equal(vmServer.requests.filter((r) => r.path === '/setup/launch').length, 1);
      assert.deepEqual([err.step, err.permanent], ['app state', false]);
      assert.match(
        err.message,
        new RegExp(`^rack-1/0 task A-01 \\(app state\\): the app's state server at ${kalgebra.url} did not answer within 0.3 s after the task's initialize steps \\(.*\\): last try: GET /version on ${kalgebra.url}: connection refused`),
      );
      kalgebra = await startKalgebraStateDouble({ curves: CURVES });
    });

    it('skips the reset script when the VM has none', async () => {
      await desktopFor({ resetScript: path.join(dir, 'missing', 'reset.sh') }).reset({ ...loadTask('A-01'), initialize: [] });
      assert.equal(vmServer.requests.some((r) => r.path === '/setup/execute'), false);
    });

    it('waits for a VM whose server comes up only after the revert', async () => {
      const port = await freePort();
      let booted: OsworldServerDouble | undefined;
      const provider: VmProvider = {
        async revert() {
          setTimeout(() => {
            void startOsworldServerDouble({ port }).then((server) => (booted = server));
          }, 300);
        },
      };
      try {
        const started = Date.now();
        await desktopFor({ url: `http://127.0.0.1:${port}`, provider }).reset({ ...loadTask('A-01'), initialize: [] });
        assert.ok(Date.now() - started >= 300);
        assert.ok(booted !== undefined && booted.requests.some((r) => r.path === '/platform'));
      } finally {
        await booted?.close();
      }
    });

    it('gives up when the server does not answer within the readiness timeout', async () => {
      const url = `http://127.0.0.1:${await freePort()}`;
      const started = Date.now();
      const err = await rejectsWith(desktopFor({ url, readyTimeoutMs: 500 }).reset(loadTask('A-01')), DesktopError);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 500 && elapsed < 3000, `took ${elapsed} ms`);
      assert.equal(err.desktopId, 'rack-1/0');
      assert.equal(err.taskId, 'A-01');
      assert.equal(err.step, 'wait for VM');
      assert.match(
        err.message,
        new RegExp(`^rack-1/0 task A-01 \\(wait for VM\\): the in-VM server at ${url} did not answer within 0.5 s after the revert: last try: GET /platform on ${url}: connection refused`),
      );
    });

    it('fails at the revert, before touching the VM, when the reset command fails', async () => {
      const provider = new CommandVmProvider(5000);
      const desktop = new OsworldDesktop({
        id: 'rack-1/0',
        vm: { url: vmServer.url, resetCommand: ['sh', '-c', 'exit 7'], screen: { width: 1280, height: 800 }, appStatePort: kalgebra.port },
        provider,
        client: createOsworldClient(vmServer.url),
        appState: createKalgebraState(kalgebra.url),
          readyTimeoutMs: 1000,
      });
      const err = await rejectsWith(desktop.reset(loadTask('A-01')), DesktopError);
      assert.equal(err.step, 'revert');
      assert.match(err.message, /exited with 7/);
      assert.equal(vmServer.requests.length, 0);
    });

    it('refuses a VM whose screen is not the configured size', async () => {
      await vmServer.close();
      vmServer = await startOsworldServerDouble({ screen: { width: 1920, height: 1080 } });
      const err = await rejectsWith(desktopFor().reset({ ...loadTask('A-01'), initialize: [] }), DesktopError);
      assert.equal(err.step, 'screen size');
      assert.match(err.message, /the VM's screen is 1920x1080, the configuration says 1280x800$/);
    });

    it('names the initialize step that failed and what the app answered', async () => {
      kalgebra.failNext(500, 1);
      const task: Task = { ...loadTask('B-03'), initialize: [{ func: 'tab', index: 1 }, { func: 'func_2d', expr: 'q->6*sin(3*q)' }] };
      const err = await rejectsWith(desktopFor().reset(task), DesktopError);
      assert.equal(err.step, 'initialize[0] tab');
      assert.match(err.message, new RegExp(`POST /tab on ${kalgebra.url}: HTTP 500 Internal Server Error: injected failure$`));
      assert.equal(kalgebra.plotted.length, 0);
    });
  });

  describe('act', () => {
    it('sends each action as rendered pyautogui code in an argv, shell false', async () => {
      const desktop = desktopFor();
      const text = `x'); import os; os.system("rm -rf /") #`;
      await desktop.act({ type: 'click', x: 10, y: 20 });
      await desktop.act({ type: 'type', text, submit: true });
      await desktop.act({ type: 'hotkey', keys: ['ctrl', 'c'] });
      // core/render/pyautogui's code after its prelude; the model's text only ever as a Python string literal.
      const prelude = 'import pyautogui; import time; pyautogui.FAILSAFE = False; ';
      assert.deepEqual(vmServer.executed, [
        { command: ['python3', '-c', `${prelude}pyautogui.click(10, 20)`], shell: false },
        { command: ['python3', '-c', `${prelude}pyautogui.write('x\\'); import os; os.system("rm -rf /") #', interval=0.02); pyautogui.press('enter')`], shell: false },
        { command: ['python3', '-c', `${prelude}pyautogui.hotkey('ctrl', 'c')`], shell: false },
      ]);
    });

    it('touches nothing for terminal actions', async () => {
      const desktop = desktopFor();
      await desktop.act({ type: 'done' });
      await desktop.act({ type: 'answer', text: '46368' });
      await desktop.act({ type: 'fail' });
      await desktop.act({ type: 'call_user' });
      assert.equal(vmServer.requests.length, 0);
    });

    it('fails with pyautogui\'s stderr when the code fails in the VM', async () => {
      await vmServer.close();
      vmServer = await startOsworldServerDouble({
        execute: pyautoguiStandIn({ output: '', error: 'Traceback (most recent call last):\npyautogui.FailSafeException: fail-safe triggered\n', returncode: 1 }),
      });
      const err = await rejectsWith(desktopFor().act({ type: 'click', x: 0, y: 0 }), DesktopError);
      assert.equal(err.step, 'act click');
      assert.match(err.message, /pyautogui exited with 1: Traceback .*\npyautogui.FailSafeException: fail-safe triggered$/s);
    });
  });

  describe('screenshot and health', () => {
    it('returns the server\'s PNG', async () => {
      const png = await desktopFor().screenshot();
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1280, 800]);
    });

    it('retries a screenshot that comes back broken (another screenshot emptied the server\'s file)', async () => {
      const png = await desktopFor().screenshot();
      vmServer.fault('/screenshot', { kind: 'status', status: 200, contentType: 'image/png', body: png.subarray(0, 100) }, 2);
      assert.deepEqual(await desktopFor().screenshot(), png);
      assert.equal(vmServer.requests.filter((r) => r.path === '/screenshot').length, 1 + 3);
    });

    it('treats a VM whose screenshots keep failing as lost, naming the step and the last failure', async () => {
      vmServer.fault('/screenshot', { kind: 'status', status: 500 }, 3);
      const err = await rejectsWith(desktopFor().screenshot(), DesktopLostError);
      assert.equal(err.step, 'screenshot');
      assert.match(err.message, /: 3 screenshots in a row failed; last: GET \/screenshot on .*: HTTP 500 INTERNAL SERVER ERROR: RuntimeError: injected fault$/);
    });

    it('counts each unanswered screenshot once toward losing the VM (no retries within a try)', async () => {
      vmServer.fault('/screenshot', { kind: 'hang' }, 3);
      const err = await rejectsWith(desktopFor({ timeoutMs: 200 }).screenshot(), DesktopLostError);
      assert.match(err.message, /3 screenshots in a row failed; last: GET \/screenshot on .*: no answer within 200 ms$/);
      assert.equal(vmServer.requests.filter((r) => r.path === '/screenshot').length, 3);
    });

    it('treats a VM whose server ran out of X clients and stays down as lost', async () => {
      await vmServer.close();
      vmServer = await startOsworldServerDouble({ screenshotsBeforeXRefuses: 2 });
      const desktop = desktopFor();
      await desktop.screenshot();
      await desktop.screenshot();
      const err = await rejectsWith(desktop.screenshot(), DesktopLostError);
      assert.match(err.message, /screenshots in a row failed; last: GET \/screenshot on .*: connection refused/);
      assert.equal(vmServer.crashes(), 1);
    });

    it('rides out a crash of the server that systemd restarts', async () => {
      await vmServer.close();
      vmServer = await startOsworldServerDouble({ screenshotsBeforeXRefuses: 1, restartAfterCrashMs: 200 });
      const desktop = desktopFor({ screenshotBackoffMs: 150 });
      for (let i = 0; i < 4; i++) assert.equal(pngSize(await desktop.screenshot()).width, 1280);
      assert.ok(vmServer.crashes() >= 1);
    });

    it('is healthy while the server answers, and not once it is gone', async () => {
      const desktop = desktopFor();
      assert.equal(await desktop.healthy(), true);
      await vmServer.close();
      assert.equal(await desktop.healthy(), false);
      vmServer = await startOsworldServerDouble();
    });
  });

  describe('evaluate', () => {
    it('checks `var` by exact printed value (A-01)', async () => {
      const task = loadTask('A-01');
      kalgebra.variables.p = '1+-i';
      assert.deepEqual(await desktopFor().evaluate(task, { reason: 'DONE' }), {
        passed: true,
        checks: [{ index: 0, type: 'var', passed: true, detail: 'expected p = "1+-i", found "1+-i"' }],
      });
      kalgebra.variables.p = '1-i';
      const failed = await desktopFor().evaluate(task, { reason: 'DONE' });
      assert.equal(failed.passed, false);
      assert.equal(failed.checks[0]?.detail, 'expected p = "1+-i", found "1-i"');
    });

    it('checks `val` within 1e-6 (C-01: log2(3))', async () => {
      const task = loadTask('C-01');
      kalgebra.variables.p = String(Math.log2(3));
      assert.equal((await desktopFor().evaluate(task, { reason: 'DONE' })).passed, true);
      kalgebra.variables.p = String(Math.log2(3) + 2e-6);
      assert.equal((await desktopFor().evaluate(task, { reason: 'DONE' })).passed, false);
      delete kalgebra.variables.p;
      const missing = await desktopFor().evaluate(task, { reason: 'DONE' });
      assert.equal(missing.checks[0]?.detail, 'expected p = 1.58496250072 (±0.000001), found undefined');
    });

    it('checks `eqn` points against the plotted functions and says which entry is off (B-04)', async () => {
      const task = loadTask('B-04');
      const desktop = desktopFor();
      const state = createKalgebraState(kalgebra.url);
      await state.plot(2, 'x->e^x');
      const failed = await desktop.evaluate(task, { reason: 'DONE' });
      assert.equal(failed.passed, false);
      assert.match(failed.checks[0]?.detail ?? '', /^no plotted function \(of 1\) agrees; closest is function 1, off on \d+: \(-2.49, -0.9170900334248273\) expected true, found false/);
      await state.plot(2, 'x->e^x-1');
      const passed = await desktop.evaluate(task, { reason: 'DONE' });
      assert.equal(passed.passed, true, JSON.stringify(passed.checks));
      assert.match(passed.checks[0]?.detail ?? '', /plotted function 2 of 2 agrees/);
    });

    it('checks the `#SIZE` of the plot (B-03: the agent must remove the function)', async () => {
      const task = loadTask('B-03');
      await createKalgebraState(kalgebra.url).plot(2, 'q->6*sin(3*q)');
      const before = await desktopFor().evaluate(task, { reason: 'DONE' });
      assert.deepEqual(before.checks[0], { index: 0, type: 'eqn', passed: false, detail: 'expected 0 plotted functions, found 1' });
      kalgebra.plotted.length = 0;
      assert.equal((await desktopFor().evaluate(task, { reason: 'DONE' })).passed, true);
    });

    it('checks `stop` without asking the VM (C-03)', async () => {
      const task = loadTask('C-03');
      const desktop = desktopFor();
      assert.equal((await desktop.evaluate(task, { reason: 'ANS', answer: '46368' })).passed, true);
      assert.equal((await desktop.evaluate(task, { reason: 'DONE' })).passed, false);
      assert.equal(kalgebra.requests.length, 0);
    });

    it('fails the check, without throwing, when the app is gone (connection refused): the app was not running at evaluation', async () => {
      await kalgebra.close();
      const result = await desktopFor().evaluate(loadTask('A-01'), { reason: 'DONE' });
      assert.deepEqual([result.passed, result.appNotRunning], [false, 'KAlgebra']);
      assert.match(result.checks[0]?.detail ?? '', /^the app's state server refused the connection \(app not running\): GET \/vars on .*ECONNREFUSED/);
      kalgebra = await startKalgebraStateDouble();
    });

    it('throws a DesktopError naming the check when the app answers an error', async () => {
      kalgebra.failNext(500, 1);
      const err = await rejectsWith(desktopFor().evaluate(loadTask('A-01'), { reason: 'DONE' }), DesktopError);
      assert.equal(err.step, 'evaluate[0] var');
      assert.equal(err.taskId, 'A-01');
    });
  });
});

/** A host of one OSWorld VM (no retries within the client), its desktop built with `options`. */
function vmPool(hostId: string, vm: OsworldVmConfig, options: Partial<OsworldDesktopOptions> = {}): DesktopPool {
  return new DesktopPool({
    hostId,
    hostQueue: `${hostId}-queue`,
    size: 1,
    leaseTtlMs: 60_000,
    serves: 'any',
    deploymentServes: 'any',
    createDesktop: (index) =>
      new OsworldDesktop({
        id: `${hostId}/${index}`,
        vm,
        provider: new CommandVmProvider(5000),
        client: createOsworldClient(vm.url, { retries: 0 }),
        appState: createKalgebraState(appStateUrl(vm)),
        readyTimeoutMs: 1000,
        ...options,
      }),
  });
}

describe('KAlgebra plot tasks with their reference plans on the OSWorld path (state server and GUI test doubles)', function () {
  this.timeout(60_000);
  /** What KAlgebra draws for the reference answers of C-07 (f'(x) of ln(x^2+1)+x^2-x), C-15 (a plane) and C-17 (a cylinder). */
  const SURFACES = {
    'diff(ln(x^2+1)+x^2-x:x)': ([x = 0, y = 0]: readonly number[]) => y - ((2 * x) / (x * x + 1) + 2 * x - 1),
    'x+y/2+z/3=1': ([x = 0, y = 0, z = 0]: readonly number[]) => x + y / 2 + z / 3 - 1,
    'x^2+y^2+z^2+2x*z=1': ([x = 0, y = 0, z = 0]: readonly number[]) => x * x + y * y + z * z + 2 * x * z - 1,
  };
  let kalgebra: KalgebraStateDouble;
  let vmServer: OsworldServerDouble;

  beforeEach(async () => {
    kalgebra = await startKalgebraStateDouble({ curves: SURFACES });
    vmServer = await startOsworldServerDouble({ screen: { width: 1920, height: 1080 }, execute: kalgebraGui(kalgebra) });
  });
  afterEach(async () => {
    await vmServer.close();
    await kalgebra.close();
  });

  for (const [id, spelled] of [['C-07', '[0, -1.0]'], ['C-15', '[-5, -10, 33.0]'], ['C-17', '[0, -0.0, 1]']] as const) {
    it(`${id}: the plan's plot passes; each point reaches the server as the task file spells it (${spelled})`, async () => {
      const task = loadTask(id);
      const vm: OsworldVmConfig = { url: vmServer.url, resetCommand: ['true'], screen: { width: 1920, height: 1080 }, appStatePort: kalgebra.port };
      const desktop = new OsworldDesktop({
        id: 'rack-1/0',
        vm,
        provider: new CommandVmProvider(5000),
        client: createOsworldClient(vm.url, { retries: 0 }),
        appState: createKalgebraState(appStateUrl(vm), { retries: 0 }),
        readyTimeoutMs: 3000,
        pollIntervalMs: 50,
        stepPauseMs: 0,
        waitScale: 0,
        resetScript: '/nonexistent/reset.sh',
      });
      await desktop.reset(task);
      const plan = referencePlan(task, vm.screen);
      assert.ok(plan.replayable, id);
      for (const action of plan.actions) await desktop.act(action);
      const stop = stopReasonOf(plan.actions.at(-1)!);
      assert.ok(stop !== undefined);
      const result = await desktop.evaluate(task, { reason: stop });
      assert.equal(result.passed, true, JSON.stringify(result.checks));
      const query = kalgebra.requests.find((r) => r.path.startsWith('/func/'));
      assert.ok(query?.body.includes(spelled), query?.body);
      assert.equal(query?.contentType, 'application/json');
    });
  }
});

describe('desktop activities on an OSWorld VM whose screenshots keep failing (in-VM server test double, real MinIO)', () => {
  it('fail the step as a lost lease, not retried, and give the lease up: the rollout leases again and its reset reverts the VM', async () => {
    const { store } = await testStack();
    const vmServer = await startOsworldServerDouble({ execute: pyautoguiStandIn(), screenshotsBeforeXRefuses: 1 });
    try {
      const vm: OsworldVmConfig = { url: vmServer.url, resetCommand: ['true'], screen: { width: 1280, height: 800 }, appStatePort: 8000 };
      const pool = vmPool('rack-9', vm, { screenshotAttempts: 2, screenshotBackoffMs: 10 });
      const activities = createDesktopActivities({ pool, store, prefix: `test/osworld-lost/${Date.now()}`, tasks: s3TaskReader(store), settleMs: 0 });
      const lease = pool.lease({ requestId: 'rollout-1#0', software: 'KAlgebra' });
      const ref = { run: 'lost-vm', software: 'KAlgebra', task: 'A-01', attempt: 0 };
      const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

      const click = (step: number): StepInput => ({ leaseId: lease.leaseId, ref, step, action: { type: 'click', x: step, y: step } });

      const first = (await env.run(activities.performStep, click(1))) as StepOutcome;
      assert.ok(first.performed && (await store.exists(first.screenshotKey)));

      const err = await env.run(activities.performStep, click(2)).catch((e: unknown) => e);
      assert.ok(err instanceof ApplicationFailure, String(err));
      assert.deepEqual([err.type, err.nonRetryable], [FAILURES.leaseLost, true]);
      assert.match(err.message, /^rack-9\/0 \(screenshot\): 2 screenshots in a row failed; last: /);
      assert.equal(pool.leased(), 0);
      assert.throws(() => pool.use(lease.leaseId), LeaseLostError);
    } finally {
      await vmServer.close();
    }
  });
});

describe('OsworldDesktop with TeXstudio tasks against the in-VM server double', function () {
  this.timeout(60_000);
  let vmServer: OsworldServerDouble;
  let dir: string;
  const chimerax: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'coda-osworld-tex-'));
    chimerax.length = 0;
    // TEST DOUBLE of ChimeraX's REST answers: every command runs, but opening an unknown structure.
    vmServer = await startOsworldServerDouble({
      chimerax: (command) => {
        chimerax.push(command);
        return command === 'open 9zzz' ? { error: { type: 'UserError', message: 'Fetch failed for 9zzz' } } : { error: null };
      },
    });
  });

  afterEach(async () => {
    await vmServer.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** TeXstudio's B-01 with the VM's /home/user/atelier moved into this test's folder, and a stand-in launch. */
  function taskIn(id: string, extra: Task['initialize'] = []): Task {
    const task = parseTask(APPS, JSON.parse(readFileSync(path.join(REPO, 'data', 'scienceboard', 'TeXstudio', `${id}.json`), 'utf8')), id);
    const moved = JSON.parse(JSON.stringify(task).replaceAll('/home/user/atelier', dir)) as Task;
    return { ...moved, initialize: [...moved.initialize.filter((s) => s.func === 'touch'), { func: 'launch', command: 'true' }, ...extra] };
  }

  const desktop = (appTimeoutMs?: number): OsworldDesktop => {
    const vm: OsworldVmConfig = { url: vmServer.url, resetCommand: ['true'], screen: { width: 1280, height: 800 }, appStatePort: 8123 };
    return new OsworldDesktop({
      ...(appTimeoutMs === undefined ? {} : { appTimeoutMs }),
      id: 'rack-1/0',
      vm,
      provider: new CommandVmProvider(5000),
      client: createOsworldClient(vm.url, { retries: 1, backoffMs: 10 }),
      appState: createKalgebraState(appStateUrl(vm), { retries: 0 }),
      readyTimeoutMs: 3000,
      pollIntervalMs: 50,
      stepPauseMs: 0,
    });
  };

  it('runs touch, execute and ChimeraX steps through the server (port given), and checks file and compile in the VM', async () => {
    const task = taskIn('B-01', [
      { func: 'execute', command: `rm -f ${dir}/stale-*`, shell: true },
      { func: 'chimerax_clear_log' },
      { func: 'chimerax_open', name: '2olx' },
      { func: 'chimerax_turn', axis: 'y', angle: 1 },
    ]);
    await writeFile(path.join(dir, 'stale-1'), 'x');
    const d = desktop();
    await d.reset(task);
    assert.deepEqual(chimerax, ['log clear', 'open 2olx', 'turn y 1']);
    assert.equal(JSON.parse(vmServer.requests.find((r) => r.path === '/chimerax/run')?.body ?? '{}').port, 8123);
    await assert.rejects(readFile(path.join(dir, 'stale-1')), { code: 'ENOENT' });

    const untouched = await d.evaluate(task, { reason: 'DONE' });
    assert.deepEqual(
      untouched.checks.map((c) => c.passed),
      [false, true],
    );
    assert.match(untouched.checks[0]?.detail ?? '', /^-….*\\cite\{de2015lean\}/m);
    assert.equal(untouched.checks[1]?.detail, `pdflatex, bibtex, pdflatex, pdflatex of main.tex in ${dir} succeeded (the VM's /tex/check)`);

    const main = path.join(dir, 'main.tex');
    await writeFile(main, (await readFile(main, 'utf8')).replace('\\cite{}', '\\cite{de2015lean}'));
    assert.equal((await d.evaluate(task, { reason: 'DONE' })).passed, true);
  });

  it('fails compile when the VM\'s pdflatex fails, and file when the VM cannot read the file', async () => {
    const task = taskIn('C-06');
    const d = desktop();
    await d.reset(task);
    const broken = await d.evaluate(task, { reason: 'DONE' });
    assert.deepEqual(broken.checks[0], { index: 0, type: 'compile', passed: false, detail: `pdflatex of main.tex in ${dir} failed (the VM's /tex/check)` });
    const missing: Task = { ...task, evaluate: [{ type: 'file', path: path.join(dir, 'gone.tex') }] };
    assert.match((await d.evaluate(missing, { reason: 'DONE' })).checks[0]?.detail ?? '', /^the task writes no initial text for/);
    const unread: Task = { ...task, initialize: [...task.initialize, { func: 'touch', path: path.join(dir, 'gone.tex'), text: 'x' }], evaluate: [{ type: 'include', path: path.join(dir, 'gone.tex'), pattern: 'x' }] };
    await rm(path.join(dir, 'gone.tex'), { force: true });
    assert.match((await d.evaluate(unread, { reason: 'DONE' })).checks[0]?.detail ?? '', /^cannot read .*gone\.tex: the VM's \/read failed/);
  });

  it('waits for /tex/check as long as the host lets an app request take (appTimeoutSeconds; ScienceBoard\'s 240 s by default)', async () => {
    const task = taskIn('C-06');
    const d = desktop(300);
    await d.reset(task);
    vmServer.fault('/tex/check', { kind: 'hang' }, 10);
    const err = await rejectsWith(d.evaluate(task, { reason: 'DONE' }), DesktopError);
    assert.match(err.message, /POST \/tex\/check on .*: no answer within 300 ms$/);
  });

  it('names the ChimeraX step that failed and ChimeraX\'s message; a VM without ChimeraX fails the step', async () => {
    const err = await rejectsWith(desktop().reset(taskIn('D-01', [{ func: 'chimerax_open', name: '9zzz' }])), DesktopError);
    assert.equal(err.step, 'initialize[2] chimerax_open');
    assert.match(err.message, /ChimeraX refused "open 9zzz": Fetch failed for 9zzz/);
    await vmServer.close();
    vmServer = await startOsworldServerDouble();
    const none = await rejectsWith(desktop().reset(taskIn('D-01', [{ func: 'chimerax_clear_log' }])), DesktopError);
    assert.match(none.message, /POST \/chimerax\/run on .*500/);
  });

  it('fails a download step for a URL of the host\'s own network, by default, and fetches nothing (issue 29, item 6)', async () => {
    // The one web server of the test, on loopback, which downloads may not reach unless temporal.yaml allows its name.
    const fetched: string[] = [];
    const web = createServer((req, res) => res.end(String(fetched.push(req.url ?? ''))));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/3ppd.cif`;
      const task = taskIn('B-01', [{ func: 'download', url, path: path.join(dir, '3ppd.cif') }]);
      const err = await rejectsWith(desktop().reset(task), DesktopError);
      assert.equal(err.step, `initialize[${task.initialize.length - 1}] download`);
      assert.match(err.message, /127\.0\.0\.1 is 127\.0\.0\.1, not a public address/);
      assert.deepEqual(fetched, []);
      assert.equal(vmServer.requests.filter((r) => r.path === '/setup/upload').length, 0);
    } finally {
      await new Promise<void>((resolve) => web.close(() => resolve()));
    }
  });
});

describe('osworld hosts in temporal.yaml', () => {
  /** The repository's file with its commented osworld example switched on. */
  function configWithExample(edit: (example: string) => string = (e) => e): string {
    const text = readFileSync(path.join(REPO, 'temporal.yaml'), 'utf8');
    const start = text.indexOf('  # - id: rack-3');
    const end = text.indexOf('\n\n', start);
    assert.ok(start > 0 && end > start, 'temporal.yaml keeps its commented osworld example');
    const example = text
      .slice(start, end)
      .split('\n')
      .map((line) => line.replace(/^  # ?/, '  '))
      .join('\n');
    return text.slice(0, start) + edit(example) + text.slice(end);
  }

  it('accepts the documented example and builds one desktop per VM', () => {
    const config = parseConfig(configWithExample(), 'temporal.yaml', {});
    const host = config.hosts.find((h): h is OsworldHostConfig => h.kind === 'osworld');
    assert.ok(host);
    assert.deepEqual([host.resetTimeoutSeconds, host.readyTimeoutSeconds, host.appTimeoutSeconds, host.vms[0]?.appStatePort], [300, 300, 240, 8000]);
    const bare = parseConfig(configWithExample((e) => e.replace(/\n\s+appTimeoutSeconds: 240[^\n]*/, '')), 'temporal.yaml', {});
    assert.equal(bare.hosts.find((h): h is OsworldHostConfig => h.kind === 'osworld')?.appTimeoutSeconds, 240, "ScienceBoard's HOMO_TIMEOUT is the default");
    const desktops = createOsworldDesktops(host);
    assert.deepEqual(
      desktops.map((d) => [d.id, d.screen.width]),
      [['rack-3/0', 1920]],
    );
    assert.throws(() => createOsworldDesktop(host, 1), /host rack-3 has no VM 1 \(it has 1\)/);
    assert.equal(appStateUrl(host.vms[0] as OsworldVmConfig), 'http://10.0.3.11:8000');
  });

  it('rejects an app state port below 1024', () => {
    assert.throws(
      () => parseConfig(configWithExample((e) => e.replace('appStatePort: 8000', 'appStatePort: 80')), 'temporal.yaml', {}),
      /hosts\[1\]\.vms\[0\]\.appStatePort: Too small/,
    );
  });
});

describe('desktop activities on an OSWorld VM: a scroll without a point (in-VM server test double, real MinIO)', () => {
  it('ask the VM where its pointer is (its /cursor_position answers 500, so through pyautogui), scroll there and return that point', async () => {
    const { store } = await testStack();
    // TEST DOUBLE of the VM's pyautogui (absent here) that keeps its pointer where moveTo and a placed scroll put it.
    let pointer = { x: 0, y: 0 };
    const vmServer = await startOsworldServerDouble({
      execute: (command) => {
        const code = Array.isArray(command) && typeof command[2] === 'string' ? command[2] : '';
        if (!code.includes('import pyautogui')) return undefined;
        const moved = /pyautogui\.moveTo\((\d+), (\d+)\)|pyautogui\.h?scroll\(-?\d+, x=(\d+), y=(\d+)\)/.exec(code);
        if (moved !== null) pointer = { x: Number(moved[1] ?? moved[3]), y: Number(moved[2] ?? moved[4]) };
        return { output: code.includes('pyautogui.position()') ? `${pointer.x} ${pointer.y}\n` : '', error: '', returncode: 0 };
      },
    });
    try {
      const vm: OsworldVmConfig = { url: vmServer.url, resetCommand: ['true'], screen: { width: 1280, height: 800 }, appStatePort: 8000 };
      const pool = vmPool('rack-8', vm);
      const activities = createDesktopActivities({ pool, store, prefix: `test/osworld-scroll/${Date.now()}`, tasks: s3TaskReader(store), settleMs: 0 });
      const lease = pool.lease({ requestId: 'rollout-1#0', software: 'KAlgebra' });
      const ref = { run: 'scroll-at-pointer', software: 'KAlgebra', task: 'A-01', attempt: 0 };
      const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
      const step = (index: number, action: StepInput['action']): Promise<StepOutcome> => env.run(activities.performStep, { leaseId: lease.leaseId, ref, step: index, action });

      const hovered = await step(1, { type: 'hover', x: 100, y: 200 });
      assert.ok(hovered.performed && hovered.action === undefined, 'an action with its point comes back as decided');
      const scrolled = await step(2, { type: 'scroll', direction: 'down', amount: 5 });
      assert.ok(scrolled.performed);
      assert.deepEqual(scrolled.action, { type: 'scroll', x: 100, y: 200, direction: 'down', amount: 5 });
      assert.equal(vmServer.requests.filter((r) => r.path === '/cursor_position').length, 1);
      assert.match(String((vmServer.executed.at(-1)?.command as string[])[2]), /pyautogui\.scroll\(-5, x=100, y=200\)$/);
      assert.deepEqual(pointer, { x: 100, y: 200 });
    } finally {
      await vmServer.close();
    }
  });
});
