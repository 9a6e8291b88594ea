import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { loadConfig } from '../../config/load';
import type { LocalHostConfig } from '../../config/schema';
import { perturbedPlanFor, referencePlanFor } from '../../apps/policies';
import { parseTask, type Task } from '../../core/task';
import { DesktopError } from '../../activities/desktop/desktop';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { appState, closeTestDesktop, play, processOf, rejectsWith, REPO, testDesktop, texstudioTask } from '../support/desktop';
import { APPS } from '../../apps/index';

const CONFIG = loadConfig(path.join(REPO, 'temporal.yaml'));

/**
 * A cross-application TeXstudio task in ScienceBoard's shape (written here for the test, as its
 * TeXstudio tasks that send the agent to KAlgebra are: the document is touched, TeXstudio opens
 * it, then the VM's modified KAlgebra is launched with its state server's port). The value to
 * correct is one KAlgebra computes (2^20).
 */
const CROSS_APP: Task = parseTask(APPS, 
  {
    type: 'TeXstudio',
    sort: 'VM',
    steps: 10,
    instruction: 'The value of 2^20 in the table shown in TeXstudio is erroneous. Compute it in KAlgebra and replace the wrong one with it.',
    version: '0.1',
    snapshot: 'sci_bench',
    initialize: [
      {
        func: 'touch',
        path: '/home/user/atelier/main.tex',
        text: [
          '\\documentclass[11pt,a4paper]{article}',
          '\\usepackage[utf8]{inputenc}',
          '\\usepackage[english]{babel}',
          '',
          '\\begin{document}',
          '',
          '\\begin{tabular}{|c|c|c|}',
          '\\hline',
          '$2^{10}$ & $2^{20}$ & $2^{30}$ \\\\',
          '\\hline',
          '$1024$ & $1048567$ & $1073741824$ \\\\',
          '\\hline',
          '\\end{tabular}',
          '',
          '\\end{document}',
          '',
        ].join('\n'),
      },
      { func: 'launch', wait: 2.5, command: 'texstudio /home/user/atelier/main.tex', shell: true },
      { func: 'launch', wait: 2.5, command: 'LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra «PORTLIKE»', shell: true },
    ],
    evaluate: [
      { type: 'file', path: '/home/user/atelier/main.tex', source: '1048567', target: '1048576' },
      { type: 'compile', path: '/home/user/atelier', file: 'main' },
    ],
  },
  'X-01',
);

describe('a cross-application TeXstudio task on one real local desktop with KAlgebra and TeXstudio', function () {
  this.timeout(180_000);
  let desktop: LocalDesktop;
  let host: LocalHostConfig;
  let dir: string;

  before(() => {
    ({ desktop, host, dir } = testDesktop('cross-app', 380));
  });

  after(async function () {
    this.timeout(30_000);
    await closeTestDesktop(desktop, dir);
  });

  /** The program of the window that has the keyboard, by its pid. */
  const activeProgram = (): string => {
    const env = { ...process.env, DISPLAY: `:${host.displayBase}` };
    const pid = execFileSync('xdotool', ['getactivewindow', 'getwindowpid'], { env, encoding: 'utf8' }).trim();
    return path.basename(execFileSync('ps', ['-o', 'comm=', '-p', pid], { encoding: 'utf8' }).trim());
  };

  it('starts both apps, KAlgebra (launched last) in front; the reference plan goes back to TeXstudio and passes, the perturbed one fails', async () => {
    for (const [name, plan, expected] of [
      ['reference', referencePlanFor(CROSS_APP, desktop.screen), true],
      ['perturbed', perturbedPlanFor(CROSS_APP, desktop.screen), false],
    ] as const) {
      assert.ok(plan.replayable, `${name}: ${plan.replayable ? '' : plan.reason}`);
      assert.deepEqual(plan.actions[0], { type: 'hotkey', keys: ['alt', 'tab'] });
      await desktop.reset(CROSS_APP);
      const texstudio = processOf(desktop.id, /texstudio$/);
      const kalgebra = processOf(desktop.id, /kalgebra$/);
      assert.equal(kalgebra.command, 'kalgebra');
      assert.deepEqual((await appState(desktop)).window, { x: 0, y: 0, width: 1920, height: 1080 });
      assert.equal(activeProgram(), 'kalgebra');
      const stop = await play(desktop, plan.actions, CONFIG.rollouts.settleMs);
      assert.equal(activeProgram(), 'texstudio');
      const result = await desktop.evaluate(CROSS_APP, stop);
      assert.equal(result.passed, expected, `${name} plan: ${result.checks.map((c) => c.detail).join(' | ')}`);
      assert.equal(processOf(desktop.id, /texstudio$/).pid, texstudio.pid, 'TeXstudio ran throughout');
      assert.equal(processOf(desktop.id, /kalgebra$/).pid, kalgebra.pid, 'KAlgebra ran throughout');
      assert.equal(await desktop.healthy(), true);
    }
  });

  it('a task of one app afterwards runs that app alone; a launch of an app no localApps entry has fails the reset naming the step', async () => {
    await desktop.reset(texstudioTask('D-01'));
    assert.throws(() => processOf(desktop.id, /kalgebra$/), /runs no/);
    processOf(desktop.id, /texstudio$/);

    const withGrass: Task = { ...CROSS_APP, initialize: [...CROSS_APP.initialize, { func: 'launch', command: 'grass --gui /home/user/grassdata/x/PERMANENT', shell: true }] };
    const err = await rejectsWith(desktop.reset(withGrass), DesktopError);
    assert.equal(err.step, 'initialize[3] launch');
    assert.equal(err.permanent, true);
    assert.match(err.message, /launch command "grass --gui \/home\/user\/grassdata\/x\/PERMANENT" matches no localApps entry \(configured: KAlgebra "\/app\/bin\/kalgebra", TeXstudio "texstudio"\)/);
  });
});

