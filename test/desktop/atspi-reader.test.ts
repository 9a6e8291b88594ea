import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { LocalHostConfig } from '../../config/schema';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { AtspiReadError } from '../../io/atspi';
import { isAlive, runCommand, waitFor } from '../../io/process';
import { kalgebraStateSchema, readKAlgebraState, type RunningKAlgebraState } from '../../apps/kalgebra/local/state';
import { readTeXstudioState, texstudioStateSchema, type RunningTeXstudioState } from '../../apps/texstudio/local/state';
import { closeTestDesktop, kalgebraTask, processOf, REPO, rejectsWith, testDesktop, texstudioTask, untilGone, untilStopped } from '../support/desktop';

/**
 * The desktop's long-lived AT-SPI reader on real apps: after each change of the app's state (real
 * clicks and typing), once a fresh python process (the app's reader run as a command, with an
 * empty cache, as every read was before) sees the new state, the long-lived reader sees it too, at
 * once, 20 times over. And a reader that was killed, or hung past a read's time, is replaced.
 */

const ALTERNATIONS = 20;

describe('the desktop AT-SPI reader on real KAlgebra and TeXstudio', function () {
  this.timeout(240_000);
  let desktop: LocalDesktop;
  let host: LocalHostConfig;
  let dir: string;

  before(() => {
    ({ desktop, host, dir } = testDesktop('atspi-reader', 480));
  });

  after(async function () {
    this.timeout(30_000);
    await closeTestDesktop(desktop, dir);
  });

  const pidOf = (program: RegExp): number => processOf(desktop.id, program).pid;

  /** The app's reader run as a command in a new python process, as each read was before the long-lived reader. */
  const freshRead = async (script: string, pid: number, args: readonly string[] = []): Promise<unknown> => {
    const bus = path.join(dir, `${host.id}-0`, 'run', 'a11y-bus');
    const out = await runCommand('/usr/bin/python3', [script, String(pid), ...args], { env: { AT_SPI_BUS_ADDRESS: `unix:path=${bus}` }, timeoutMs: 10_000 });
    return JSON.parse(out.toString('utf8'));
  };

  const kalgebra = async (): Promise<RunningKAlgebraState> => {
    const state = await readKAlgebraState({ reader: desktop.atspiReader(), pid: pidOf(/kalgebra$/), timeoutMs: 10_000 });
    assert.ok(state.app, 'KAlgebra is on the accessibility bus');
    return state;
  };

  /** Waits until a fresh process sees KAlgebra in a state that passes `test`. */
  const untilFresh = (test: (s: RunningKAlgebraState) => boolean, what: string): Promise<true> =>
    waitFor(
      async () => {
        const state = kalgebraStateSchema.parse(await freshRead(path.join(REPO, 'apps', 'kalgebra', 'local', 'kalgebra_state.py'), pidOf(/kalgebra$/)));
        return state.app && test(state) ? true : undefined;
      },
      10_000,
      () => `a fresh read never saw ${what}`,
    );

  const click = (box: { x: number; y: number; width: number; height: number }): Promise<void> =>
    desktop.act({ type: 'click', x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) });

  it('reads each new KAlgebra tab, calculator line and variable back at once, 20 times over, with one reader process', async () => {
    await desktop.reset(kalgebraTask('A-01'));
    const reader = processOf(desktop.id, /python3$/);
    assert.match(reader.command, /io\/atspi_reader\.py$/);
    let state = await kalgebra();
    for (let i = 0; i < ALTERNATIONS; i += 1) {
      const tab = i % 2 === 0 ? '2D Graph' : 'Calculator';
      const box = state.mainTabs?.tabs.find((t) => t.name === tab);
      assert.ok(box !== undefined, `KAlgebra shows a "${tab}" tab`);
      await click(box);
      await waitFor(
        async () => {
          const view = (await freshRead(path.join(REPO, 'apps', 'kalgebra', 'local', 'kalgebra_state.py'), pidOf(/kalgebra$/), ['--view'])) as { mainTabs?: { current?: string } };
          return view.mainTabs?.current === tab ? true : undefined;
        },
        10_000,
        () => `a fresh read never saw the "${tab}" tab`,
      );
      state = await kalgebra();
      assert.equal(state.mainTabs?.current, tab, `alternation ${i}: the reader sees the "${tab}" tab`);
      assert.equal(state.calculatorInput?.showing, tab === 'Calculator', `alternation ${i}: the calculator input shows only on its tab`);
      if (tab !== 'Calculator') continue;
      const lines = state.console.length;
      await desktop.act({ type: 'type', text: `v${i} := ${i}`, submit: true });
      await untilFresh((s) => s.console.length === lines + 1, `the line v${i} := ${i} in the console`);
      state = await kalgebra();
      assert.deepEqual(state.console.at(-1), { input: `v${i}:=${i}`, result: `${i}` }, `alternation ${i}: the reader sees the new line`);
      assert.deepEqual(state.variables.find((v) => v.name === `v${i}`), { name: `v${i}`, value: `${i}` }, `alternation ${i}: the reader sees the new variable`);
    }
    assert.equal(processOf(desktop.id, /python3$/).pid, reader.pid, 'every read went to the same reader process');
  });

  it('reads each new TeXstudio document tab and window title back at once, 20 times over', async () => {
    await desktop.reset(texstudioTask('B-01'));
    const home = path.join(dir, `${host.id}-0`, 'home');
    const texstudio = async (): Promise<RunningTeXstudioState> => {
      const state = await readTeXstudioState({ reader: desktop.atspiReader(), pid: pidOf(/texstudio$/), timeoutMs: 10_000 });
      assert.ok(state.app, 'TeXstudio is on the accessibility bus');
      return state;
    };
    let state = await texstudio();
    assert.equal(state.documents?.current, 'main.tex');
    for (let i = 0; i < ALTERNATIONS; i += 1) {
      const document = i % 2 === 0 ? 'refs.bib' : 'main.tex';
      const box = state.documents?.tabs.find((t) => t.name === document);
      assert.ok(box !== undefined, `TeXstudio has a tab for ${document}`);
      await click(box);
      await waitFor(
        async () => {
          const fresh = texstudioStateSchema.parse(await freshRead(path.join(REPO, 'apps', 'texstudio', 'local', 'texstudio_state.py'), pidOf(/texstudio$/)));
          return fresh.app && fresh.documents?.current === document ? true : undefined;
        },
        10_000,
        () => `a fresh read never saw ${document} current`,
      );
      state = await texstudio();
      assert.equal(state.documents?.current, document, `alternation ${i}: the reader sees ${document} current`);
      assert.equal(state.title, `${path.join(home, 'atelier', document)} - TeXstudio`, `alternation ${i}: the reader sees the new title`);
    }
  });

  it('answers a bad request with an error and lives on; a killed reader, or one hung past a read, is replaced at the next read', async () => {
    await desktop.reset(kalgebraTask('A-01'));
    const reader = desktop.atspiReader();
    const first = reader.pid;
    assert.ok(first !== undefined && isAlive(first), 'the reader runs');

    const missing = path.join(REPO, 'apps', 'kalgebra', 'local', 'no_such_reader.py');
    const refused = await rejectsWith(reader.read(missing, pidOf(/kalgebra$/), [], 10_000), AtspiReadError);
    assert.match(refused.message, /no_such_reader\.py/);
    const badArgs = await rejectsWith(reader.read(path.join(REPO, 'apps', 'kalgebra', 'local', 'kalgebra_state.py'), pidOf(/kalgebra$/), ['--nope'], 10_000), AtspiReadError);
    assert.match(badArgs.message, /args: expected \[\] or \['--view'\]/);
    assert.equal(reader.pid, first, 'a failed read leaves the reader running');
    assert.equal((await kalgebra()).mainTabs?.current, 'Calculator');

    process.kill(first, 'SIGKILL');
    await untilGone(first);
    assert.equal((await kalgebra()).mainTabs?.current, 'Calculator');
    const second = reader.pid;
    assert.ok(second !== undefined && second !== first && isAlive(second), 'a new reader replaced the killed one');
    assert.equal(processOf(desktop.id, /python3$/).pid, second, 'the new reader carries the desktop marker');

    process.kill(second, 'SIGSTOP');
    await untilStopped(second);
    const hung = await rejectsWith(readKAlgebraState({ reader, pid: pidOf(/kalgebra$/), timeoutMs: 2_000 }), AtspiReadError);
    assert.match(hung.message, /kalgebra_state\.py \d+ timed out after 2000 ms/);
    await untilGone(second);
    assert.equal((await kalgebra()).mainTabs?.current, 'Calculator');
    const third = reader.pid;
    assert.ok(third !== undefined && third !== second && isAlive(third), 'a new reader replaced the hung one');
    assert.equal(await desktop.healthy(), true);
  });
});
