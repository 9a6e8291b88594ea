import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import type { LocalHostConfig } from '../../config/schema';
import { parseExecutorOutput } from '../../core/executor-parser';
import { parseTask, type Task } from '../../core/task';
import { kalgebraPoint } from '../../apps/kalgebra/layout';
import { DesktopError } from '../../activities/desktop/desktop';
import { RenderError } from '../../core/render/keys';
import type { LocalDesktop } from '../../activities/desktop/local/local-desktop';
import { appState, closeTestDesktop, kalgebraTask, pngSize, processOf, testDesktop, untilGone, untilStopped } from '../support/desktop';
import { APPS } from '../../apps/index';
import { freeDisplay } from '../../infra/ephemeral';
import { displaySocket, readRootImage, type RgbImage } from '../../io/x11-image';

/** A PNG's pixels as RGB bytes, decoded by sharp. */
async function pixels(png: Buffer): Promise<{ width: number; height: number; channels: number; rgb: Buffer }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, rgb: data };
}

/** Expects `promise` to reject with a DesktopError for `taskId` at `step` whose message matches `message`. */
async function rejectsAt(promise: Promise<unknown>, taskId: string, step: string, message: RegExp): Promise<DesktopError> {
  const err = await promise.then(
    () => assert.fail(`expected a DesktopError at ${step}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DesktopError, `expected a DesktopError, got ${String(err)}`);
  assert.equal(err.taskId, taskId);
  assert.equal(err.step, step);
  assert.match(err.message, message);
  assert.ok(err.message.includes(`task ${taskId} (${step})`), err.message);
  return err;
}

describe('LocalDesktop on a real Xvfb display with Debian KAlgebra', function () {
  this.timeout(120_000);
  let desktop: LocalDesktop;
  let host: LocalHostConfig;
  let dir: string;
  const A01 = kalgebraTask('A-01');

  before(() => {
    ({ desktop, host, dir } = testDesktop('desktop-test', 150));
  });

  after(async function () {
    this.timeout(30_000);
    await closeTestDesktop(desktop, dir);
  });

  it('resets to a maximized KAlgebra on its own display, HOME and buses; screenshots are 1920x1080 PNGs', async () => {
    await desktop.reset(A01);
    const png = await desktop.screenshot();
    assert.deepEqual(pngSize(png), { width: 1920, height: 1080 });

    const state = await appState(desktop);
    assert.deepEqual(state.window, { x: 0, y: 0, width: 1920, height: 1080 });
    assert.equal(state.mainTabs?.current, 'Calculator');
    assert.deepEqual(state.functions, []);
    assert.equal(state.variables.find((v) => v.name === 'p'), undefined);

    const app = processOf(desktop.id, /kalgebra$/);
    const env = readFileSync(`/proc/${app.pid}/environ`, 'utf8').split('\0');
    assert.ok(env.includes(`DISPLAY=:${host.displayBase}`), 'the app draws on the desktop display');
    assert.ok(env.includes(`HOME=${path.join(dir, `${host.id}-0`, 'home')}`), 'the app has the desktop HOME');
    processOf(desktop.id, new RegExp(`Xvfb$`));
    processOf(desktop.id, /openbox$/);
    assert.equal(await desktop.healthy(), true);
  });

  it("screenshots, read from the X server without a process per shot, are the pixels of ImageMagick's `import -window root`; a region read is their crop", async () => {
    await desktop.reset(kalgebraTask('B-03'));
    // A still screen: the stopped app repaints nothing (no blinking cursor) while both read it.
    const app = processOf(desktop.id, /kalgebra$/);
    process.kill(app.pid, 'SIGSTOP');
    await untilStopped(app.pid);
    let ours: Buffer;
    let theirs: Buffer;
    const region = { x: 101, y: 57, width: 333, height: 211 };
    let part: RgbImage;
    try {
      ours = await desktop.screenshot();
      part = await readRootImage(`:${host.displayBase}`, 5_000, region);
      theirs = execFileSync('import', ['-window', 'root', 'png:-'], { env: { ...process.env, DISPLAY: `:${host.displayBase}` }, maxBuffer: 64 * 1024 * 1024 });
    } finally {
      process.kill(app.pid, 'SIGCONT');
    }
    assert.equal(ours.readUInt32BE(0), 0x89504e47, 'a PNG');
    const [mine, imagemagick] = [await pixels(ours), await pixels(theirs)];
    assert.deepEqual([mine.width, mine.height, mine.channels], [1920, 1080, 3]);
    assert.deepEqual([imagemagick.width, imagemagick.height, imagemagick.channels], [1920, 1080, 3]);
    assert.ok(mine.rgb.equals(imagemagick.rgb), 'the same RGB bytes');
    // A region (what a driver watching one widget reads): the same bytes as that rectangle of the whole screen.
    const crop = Buffer.concat(Array.from({ length: region.height }, (_, row) => mine.rgb.subarray(((region.y + row) * 1920 + region.x) * 3, ((region.y + row) * 1920 + region.x + region.width) * 3)));
    assert.deepEqual([part.width, part.height], [region.width, region.height]);
    assert.ok(part.rgb.equals(crop), "a region's RGB bytes are the crop of the screen's");
    await assert.rejects(readRootImage(`:${host.displayBase}`, 5_000, { x: 1900, y: 0, width: 21, height: 10 }), /region \{"x":1900,"y":0,"width":21,"height":10\} is not a non-empty rectangle of whole pixels inside the 1920x1080 screen/);
    // Not a blank screen that any two captures would agree on: KAlgebra's window and its plot.
    const colours = new Set<number>();
    for (let i = 0; i < mine.rgb.length; i += 3) colours.add(mine.rgb.readUIntBE(i, 3));
    assert.ok(colours.size > 50, `${colours.size} colours on the screen`);
    assert.equal(await desktop.healthy(), true);

    // Each shot has its own connection: a display that is gone says so, a bad DISPLAY says what is expected.
    const none = freeDisplay(700);
    await assert.rejects(readRootImage(`:${none}`, 2_000), new RegExp(`^Error: reading the screen of X display :${none}: connect ENOENT /tmp/\\.X11-unix/X${none}$`));
    assert.throws(() => displaySocket('remote:0'), /DISPLAY must be a local display ":N", got "remote:0"/);
  });

  it('types into the calculator with real key events; the Variables dock has the value at full precision', async () => {
    await desktop.reset(A01);
    await desktop.act({ type: 'click', ...kalgebraPoint('calculatorInput', desktop.screen) });
    await desktop.act({ type: 'type', text: 'p := e^pi', submit: true });
    await sleep(300);
    const state = await appState(desktop);
    assert.equal(state.variables.find((v) => v.name === 'p')?.value, '23.140692620502403');
    assert.deepEqual(state.console.at(-1), { input: 'p:=e^pi', result: '23.1406926205' });

    const checks: Task = {
      ...A01,
      evaluate: [
        { type: 'val', key: 'p', value: 23.1406926205 },
        { type: 'var', key: 'p', value: '23.1406926205' },
        { type: 'var', key: 'q', value: '#UNDEF' },
        { type: 'val', key: 'p', value: 23.15 },
        { type: 'var', key: 'p', value: '#UNDEF' },
      ],
    };
    const result = await desktop.evaluate(checks, { reason: 'DONE' });
    assert.deepEqual(
      result.checks.map((c) => c.passed),
      [true, true, true, false, false],
    );
    assert.equal(result.passed, false);
    assert.match(result.checks[0]?.detail ?? '', /found 23\.140692620502403/);
    assert.match(result.checks[1]?.detail ?? '', /calculator log: p:=e\^pi/);
    assert.match(result.checks[4]?.detail ?? '', /expected p undefined, found p = 23\.140692620502403/);
  });

  it('performs hotkeys, waits and terminal actions; terminal actions touch nothing; an unrenderable action is a RenderError', async () => {
    await desktop.reset(A01);
    await desktop.act({ type: 'hotkey', keys: ['alt', '3'] });
    await desktop.act({ type: 'wait', seconds: 0.3 });
    assert.equal((await appState(desktop)).mainTabs?.current, '3D Graph');
    await desktop.act({ type: 'type', text: 'x^2+y^2', submit: false });
    const before = await appState(desktop);
    assert.equal(before.input3d?.text, 'x^2+y^2');
    for (const action of [{ type: 'done' }, { type: 'fail' }, { type: 'answer', text: '42' }, { type: 'call_user' }] as const) {
      await desktop.act(action);
    }
    // A key no X display has: the action's fault (a failed step), not a DesktopError (a desktop to replace).
    await assert.rejects(desktop.act({ type: 'hotkey', keys: ['ctrl', 'hyper'] }), (err) => err instanceof RenderError && /unknown key "hyper"/.test(err.message));
    const after = await appState(desktop);
    assert.equal(after.input3d?.text, before.input3d?.text);
    assert.equal(after.mainTabs?.current, '3D Graph');
  });

  it("scrolls where the pointer is for UI-TARS's scroll(direction=...), moving nothing; pointer() says where that is", async () => {
    await desktop.reset(A01);
    await desktop.act({ type: 'hover', x: 321, y: 654 });
    const parsed = parseExecutorOutput("Thought: Scroll the console down.\nAction: scroll(direction='down')", { screen: desktop.screen });
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.reason);
    await desktop.act(parsed.action);
    const said = execFileSync('xdotool', ['getmouselocation', '--shell'], { env: { ...process.env, DISPLAY: `:${host.displayBase}` }, encoding: 'utf8' });
    assert.match(said, /^X=321\nY=654\n/);
    assert.deepEqual(await desktop.pointer(), { x: 321, y: 654 });
  });

  it('plays func_2d and func_3d through the GUI and checks plots, sizes and the unsupported look of a plot', async () => {
    await desktop.reset(kalgebraTask('B-03'));
    let state = await appState(desktop);
    assert.equal(state.mainTabs?.current, '2D Graph');
    assert.deepEqual(state.functions, [{ name: 'f0', expression: 'q->6*sin(3*q)', shown: true }]);
    const size = await desktop.evaluate(kalgebraTask('B-03'), { reason: 'DONE' });
    assert.equal(size.passed, false);
    assert.equal(size.checks[0]?.detail, 'expected 0 functions in the 2D list, found 1: f0 q->6*sin(3*q)');

    await desktop.reset(kalgebraTask('B-04'));
    const colour = await desktop.evaluate(kalgebraTask('B-04'), { reason: 'DONE' });
    assert.equal(colour.passed, false);
    assert.match(colour.checks[0]?.detail ?? '', /^f0 x->e\^x-1 agrees with all 10 points; color "#000000" unsupported/);

    await desktop.reset(kalgebraTask('B-06'));
    state = await appState(desktop);
    assert.equal(state.mainTabs?.current, '3D Graph');
    assert.equal(state.input3d?.text, 'x^2-y^2=2');
    assert.equal(state.plotStyle3d, 'Solid');
    const style = await desktop.evaluate(kalgebraTask('B-06'), { reason: 'DONE' });
    assert.equal(style.passed, false);
    assert.match(style.checks[0]?.detail ?? '', /style 2 unsupported: .*reads Solid/);
  });

  it('checks the 2D plot resolution (res) from the checked item of the 2D Graph menu', async () => {
    // ScienceBoard's KAlgebra B-05 (tasks/VM/KAlgebra/B-05.json, not among the 20 shipped tasks), unchanged but for its id.
    const b05 = parseTask(APPS, 
      {
        type: 'KAlgebra',
        sort: 'VM',
        steps: 5,
        instruction: "Change resolution of the given curve into 'Very Fine' in KAlgebra.",
        version: '0.1',
        snapshot: 'sci_bench',
        initialize: [
          { func: 'launch', wait: 2.5, command: 'LD_LIBRARY_PATH=/home/user/6.5.0/gcc_64/lib /app/bin/kalgebra «PORTLIKE»', shell: true },
          { func: 'tab', index: 1 },
          { func: 'func_2d', expr: 'x->sin(x+pi/4)' },
        ],
        evaluate: [
          {
            type: 'eqn',
            key: [[-1, -0.21295841515929623], [-13, 10.294654062971047], [0, 0.7071067811865475], [18, 19.308407736694406]],
            value: { '(-1, -0.21295841515929623)': true, '(-13, 10.294654062971047)': false, '(0, 0.7071067811865475)': true, '(18, 19.308407736694406)': false, res: 3328 },
          },
        ],
        ans: 'N/A',
      },
      'B-05',
    );
    await desktop.reset(b05);
    const normal = await desktop.evaluate(b05, { reason: 'DONE' });
    assert.equal(normal.passed, false);
    assert.match(normal.checks[0]?.detail ?? '', /^f0 x->sin\(x\+pi\/4\) agrees with all 4 points; res expected 3328 \(Very Fine\), found 832 \(Normal\)$/);
    // The 2D Graph menu (Alt+D) wraps from its first item to its last, Very Fine.
    for (const keys of [['alt', 'd'], ['up'], ['enter']]) await desktop.act({ type: 'hotkey', keys });
    await sleep(300);
    assert.equal((await appState(desktop)).resolution2d, 'Very Fine');
    const veryFine = await desktop.evaluate(b05, { reason: 'DONE' });
    assert.equal(veryFine.passed, true, veryFine.checks[0]?.detail);
    assert.equal(veryFine.checks[0]?.detail, 'f0 x->sin(x+pi/4) agrees with all 4 points; res 3328 (Very Fine)');
  });

  it('checks the surface KAlgebra plotted, not the text of the 3D field', async () => {
    const b07 = kalgebraTask('B-07');
    const wanted = b07.ans ?? assert.fail('B-07 has an ans');
    await desktop.reset(b07);
    const field = { type: 'click' as const, ...kalgebraPoint('graph3dInput', desktop.screen) };
    // Typed, not entered: the given surface is still the one plotted.
    await desktop.act(field);
    await desktop.act({ type: 'hotkey', keys: ['ctrl', 'a'] });
    await desktop.act({ type: 'type', text: wanted, submit: false });
    assert.equal((await appState(desktop)).input3d?.text, wanted);
    const typed = await desktop.evaluate(b07, { reason: 'DONE' });
    assert.equal(typed.passed, false);
    assert.match(typed.checks[0]?.detail ?? '', /closest 3D graph \(x, y\)->sin\(x\)\^2\+cos\(y\)\^2-1\/\(x\^2\*y\^2\):/);
    assert.match(typed.checks[0]?.detail ?? '', /the 3D field reads "\(x, y\) -> sin\(x\^2\).*", which is not plotted/);

    await desktop.act({ type: 'hotkey', keys: ['enter'] });
    const entered = await desktop.evaluate(b07, { reason: 'DONE' });
    assert.equal(entered.passed, true, entered.checks[0]?.detail);

    // An expression KAlgebra refuses leaves the plotted surface as it was.
    await desktop.act({ type: 'hotkey', keys: ['ctrl', 'a'] });
    await desktop.act({ type: 'type', text: 'x->x^2', submit: true });
    const state = await appState(desktop);
    assert.equal(state.input3d?.text, 'x->x^2');
    assert.match(state.statusBar, /^Errors: /);
    const refused = await desktop.evaluate(b07, { reason: 'DONE' });
    assert.equal(refused.passed, true, refused.checks[0]?.detail);
    assert.match(refused.checks[0]?.detail ?? '', /the 3D field reads "x->x\^2", which is not plotted/);
  });

  it('writes a touch step into the desktop HOME, where the file dialog finds ~/', async () => {
    await desktop.reset(kalgebraTask('C-05'));
    assert.equal(readFileSync(path.join(dir, `${host.id}-0`, 'home', 'script.kal'), 'utf8'), 'a := vector{-1, root(3, 3)}');
  });

  it('reports a killed app at the next action, naming task and step; the next reset recovers', async () => {
    await desktop.reset(A01);
    const killed = processOf(desktop.id, /kalgebra$/).pid;
    process.kill(killed, 'SIGKILL');
    await untilGone(killed);
    await rejectsAt(desktop.act({ type: 'click', x: 100, y: 100 }), 'A-01', 'act #1 click', /KAlgebra \(pid \d+\) killed by SIGKILL/);
    await rejectsAt(desktop.evaluate(A01, { reason: 'DONE' }), 'A-01', 'evaluate', /killed by SIGKILL/);
    assert.equal(await desktop.healthy(), false);

    await desktop.reset(A01);
    assert.equal(await desktop.healthy(), true);
    await desktop.act({ type: 'click', ...kalgebraPoint('calculatorInput', desktop.screen) });
    await desktop.act({ type: 'type', text: 'p := conjugate(1+i)', submit: true });
    await sleep(300);
    assert.equal((await desktop.evaluate(A01, { reason: 'DONE' })).passed, true);
  });

  it('reports a hung (stopped) app; the next reset recovers', async () => {
    await desktop.reset(A01);
    const app = processOf(desktop.id, /kalgebra$/);
    process.kill(app.pid, 'SIGSTOP');
    await untilStopped(app.pid);
    await rejectsAt(desktop.act({ type: 'type', text: '1', submit: false }), 'A-01', 'act #1 type', /KAlgebra \(pid \d+\) is stopped \(not responding\)/);
    assert.equal(await desktop.healthy(), false);
    await desktop.reset(A01);
    assert.equal(await desktop.healthy(), true);
    assert.notEqual(processOf(desktop.id, /kalgebra$/).pid, app.pid);
  });

  it('reports a dead X server at the next action and screenshot; the next reset starts a new display', async () => {
    await desktop.reset(A01);
    const xvfb = processOf(desktop.id, /Xvfb$/);
    process.kill(xvfb.pid, 'SIGKILL');
    await untilGone(xvfb.pid);
    await rejectsAt(desktop.act({ type: 'hotkey', keys: ['ctrl', 'a'] }), 'A-01', 'act #1 hotkey', new RegExp(`X display is broken: Xvfb :${host.displayBase} \\(pid \\d+\\) killed by SIGKILL`));
    await rejectsAt(desktop.screenshot(), 'A-01', 'screenshot', /Xvfb .* killed by SIGKILL/);
    assert.equal(await desktop.healthy(), false);

    await desktop.reset(A01);
    assert.notEqual(processOf(desktop.id, /Xvfb$/).pid, xvfb.pid);
    assert.deepEqual(pngSize(await desktop.screenshot()), { width: 1920, height: 1080 });
    assert.equal(await desktop.healthy(), true);
  });

  it('refuses invalid tasks, unknown apps and failing initialize steps with DesktopErrors naming task and step, then recovers', async () => {
    const launch = A01.initialize[0];
    assert.equal(launch?.func, 'launch');
    await rejectsAt(desktop.reset({ ...A01, evaluate: [] }), 'A-01', 'validate', /task A-01 is invalid:\n {2}- evaluate/);
    await rejectsAt(desktop.reset({ ...A01, type: 'Celestia' }), 'A-01', 'launch', /no localApps entry runs software "Celestia" \(configured: KAlgebra, TeXstudio\)/);
    await rejectsAt(
      desktop.reset({ ...A01, initialize: [{ func: 'launch', command: '/app/bin/celestia' }] }),
      'A-01',
      'initialize[0] launch',
      /launch command "\/app\/bin\/celestia" matches no localApps entry \(configured: KAlgebra "\/app\/bin\/kalgebra", TeXstudio "texstudio"\)/,
    );
    await rejectsAt(
      desktop.reset({ ...A01, initialize: [launch, { func: 'tab', index: 1 }, { func: 'func_2d', expr: 'x->sin(' }] }),
      'A-01',
      'initialize[2] func_2d',
      /KAlgebra did not add "x->sin\(" to the function list/,
    );
    assert.equal(await desktop.healthy(), false);
    await rejectsAt(
      desktop.reset({ ...A01, initialize: [launch, { func: 'touch', text: 'x', path: '/etc/coda-test' }] }),
      'A-01',
      'initialize[1] touch',
      /"\/etc\/coda-test" is outside the VM user's home/,
    );

    await desktop.reset(A01);
    assert.equal(await desktop.healthy(), true);
    assert.deepEqual(pngSize(await desktop.screenshot()), { width: 1920, height: 1080 });
  });
});
