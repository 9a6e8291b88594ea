import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalHostConfig } from '../../config/schema';
import type { Task } from '../../core/task';
import { DesktopError } from '../../activities/desktop/desktop';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { readTeXstudioState } from '../../apps/texstudio/local/state';
import { referencePlan } from '../../apps/texstudio/reference';
import { appState, closeTestDesktop, kalgebraTask, pngSize, processOf, rejectsWith, testDesktop, texstudioTask, untilGone } from '../support/desktop';

describe('LocalDesktop with Debian TeXstudio', function () {
  this.timeout(120_000);
  let desktop: LocalDesktop;
  let host: LocalHostConfig;
  let dir: string;
  const B01 = texstudioTask('B-01');
  const home = (): string => path.join(dir, `${host.id}-0`, 'home');

  before(() => {
    ({ desktop, host, dir } = testDesktop('texstudio-desktop', 450));
  });

  after(async function () {
    this.timeout(30_000);
    await closeTestDesktop(desktop, dir);
  });

  const texstudioState = async () => {
    const pid = processOf(desktop.id, /texstudio$/).pid;
    const state = await readTeXstudioState({ reader: desktop.atspiReader(), pid, timeoutMs: 10_000 });
    assert.ok(state.app, 'TeXstudio is on the accessibility bus');
    return state;
  };

  it('touches the documents into the desktop HOME and opens them in a maximized TeXstudio, the last one shown', async () => {
    await desktop.reset(B01);
    assert.equal(readFileSync(path.join(home(), 'atelier', 'main.tex'), 'utf8'), B01.initialize[0]?.func === 'touch' ? B01.initialize[0].text : '');
    assert.match(readFileSync(path.join(home(), 'atelier', 'refs.bib'), 'utf8'), /^@inproceedings\{de2015lean,/);
    const app = processOf(desktop.id, /texstudio$/);
    assert.equal(app.command, `texstudio --start-always --no-session ${path.join(home(), 'atelier', 'refs.bib')} ${path.join(home(), 'atelier', 'main.tex')}`);
    const state = await texstudioState();
    assert.deepEqual(state.window, { x: 0, y: 0, width: 1920, height: 1080 });
    assert.equal(state.title, `${path.join(home(), 'atelier', 'main.tex')} - TeXstudio`);
    assert.deepEqual(
      state.documents?.tabs.map((t) => t.name),
      ['refs.bib', 'main.tex'],
    );
    assert.deepEqual(pngSize(await desktop.screenshot()), { width: 1920, height: 1080 });
    assert.equal(await desktop.healthy(), true);
    // Nothing edited yet: the file check fails, the document compiles.
    const result = await desktop.evaluate(B01, { reason: 'DONE' });
    assert.deepEqual(
      result.checks.map((c) => c.passed),
      [false, true],
    );
  });

  it('serves KAlgebra and TeXstudio tasks on the same desktop, one app at a time', async () => {
    await desktop.reset(kalgebraTask('A-01'));
    assert.equal((await appState(desktop)).mainTabs?.current, 'Calculator');
    assert.throws(() => processOf(desktop.id, /texstudio$/), /runs no/);
    await desktop.reset(texstudioTask('D-01'));
    assert.equal((await texstudioState()).documents?.current, 'main.tex');
    assert.throws(() => processOf(desktop.id, /kalgebra$/), /runs no/);
    assert.equal((await desktop.evaluate(texstudioTask('D-01'), { reason: 'ANS', answer: '13' })).passed, true);
  });

  it('acts and checks the saved files after the agent quit TeXstudio; a closed KAlgebra fails its checks', async () => {
    await desktop.reset(B01);
    const plan = referencePlan(B01);
    assert.ok(plan.replayable);
    for (const action of plan.actions.slice(0, -1)) {
      await desktop.act(action);
      await sleep(300);
    }
    const app = processOf(desktop.id, /texstudio$/).pid;
    await desktop.act({ type: 'hotkey', keys: ['ctrl', 'q'] });
    await untilGone(app);
    await desktop.act({ type: 'click', x: 900, y: 500 });
    assert.deepEqual(pngSize(await desktop.screenshot()), { width: 1920, height: 1080 });
    const result = await desktop.evaluate(B01, { reason: 'DONE' });
    assert.equal(result.passed, true, JSON.stringify(result.checks));
    assert.equal(await desktop.healthy(), false, 'the pool replaces it once released');

    const a01 = kalgebraTask('A-01');
    await desktop.reset(a01);
    const kalgebra = processOf(desktop.id, /kalgebra$/).pid;
    await desktop.act({ type: 'hotkey', keys: ['ctrl', 'q'] });
    await untilGone(kalgebra);
    const gone = await desktop.evaluate(a01, { reason: 'DONE' });
    assert.equal(gone.passed, false);
    assert.match(gone.checks[0]?.detail ?? '', /^KAlgebra was closed before the checks \(KAlgebra is not on the accessibility bus\)$/);
  });

  it('runs the harmless execute steps and refuses the rest, naming task and step', async () => {
    const removing: Task = {
      ...B01,
      initialize: [
        ...B01.initialize.slice(0, 2),
        { func: 'touch', path: '/home/user/.config/ChimeraX/ui-1', text: 'x' },
        { func: 'execute', command: 'rm -f /home/user/.config/ChimeraX/ui-*', shell: true },
        ...B01.initialize.slice(2),
      ],
    };
    await desktop.reset(removing);
    assert.equal(readFileSync(path.join(home(), 'atelier', 'main.tex'), 'utf8').includes('\\cite{}'), true);
    assert.throws(() => readFileSync(path.join(home(), '.config', 'ChimeraX', 'ui-1')), /ENOENT/);

    const refused: Task = { ...B01, initialize: [...B01.initialize, { func: 'execute', command: 'curl https://scholar.google.com', shell: true }] };
    const err = await rejectsWith(desktop.reset(refused), DesktopError);
    assert.equal(err.step, 'initialize[3] execute');
    assert.match(err.message, /refused to run "curl https:\/\/scholar\.google\.com": only rm of files in the desktop's HOME runs here, not "curl"/);
    assert.equal(err.permanent, false);
  });

  it('refuses the steps of apps it does not have: a ChimeraX launch, ChimeraX commands, TeXstudio options', async () => {
    const a01 = texstudioTask('A-01');
    const chimerax = await rejectsWith(desktop.reset(a01), DesktopError);
    assert.equal(chimerax.step, 'initialize[4] launch');
    assert.equal(chimerax.permanent, true);
    assert.match(chimerax.message, /launch command "chimerax --cmd remotecontrol rest start json true port «PORTLIKE»" matches no localApps entry/);

    const command: Task = { ...B01, initialize: [...B01.initialize, { func: 'chimerax_open', name: '2olx' }] };
    const open = await rejectsWith(desktop.reset(command), DesktopError);
    assert.equal(open.step, 'initialize[3] chimerax_open');
    assert.match(open.message, /chimerax_open needs ChimeraX, and no launch of it came before/);

    const option: Task = { ...B01, initialize: [...B01.initialize.slice(0, 2), { func: 'launch', command: 'texstudio --master /home/user/atelier/main.tex', shell: true }] };
    const flag = await rejectsWith(desktop.reset(option), DesktopError);
    assert.match(flag.message, /TeXstudio option "--master" is not supported on local desktops/);

    await desktop.reset(B01);
    assert.equal(await desktop.healthy(), true);
  });
});
