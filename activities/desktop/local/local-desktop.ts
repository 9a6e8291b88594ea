import { mkdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GuiAction, InputEvent, Point } from '../../../core/actions';
import { isTerminal } from '../../../core/episode';
import { combineChecks, evaluateStop, type EvaluationResult, type StopInfo } from '../../../core/evaluation';
import { toInputEvents } from '../../../core/render/input-events';
import { parseTask, type InitializeStep, type Task } from '../../../core/task';
import type { LocalApp, LocalHostConfig } from '../../../config/schema';
import { DesktopError, type Desktop } from '../desktop';
import type { AppDriver, AppSession, LaunchStep } from '../../../apps/local-driver';
import { defaultDrivers } from './drivers';
import { performInputEvents, pointerLocation } from './input';
import { localAppsFor, stepSoftware, UnknownAppError, type TaskApps } from './local-apps';
import { describeExit, desktopMarker, killMarked, killOrphans, ManagedProcess, untilIdle } from '../../../io/process';
import { capturePixels, captureScreen } from './screenshot';
import { DEFAULT_TOOLS, type DesktopTools } from './tools';
import { runVmCommand, writeHomeFile } from '../../../io/vm-commands';
import { X11Display, type Screen } from './x11-display';
import type { AtspiReader } from '../../../io/atspi';
import { APPS } from '../../../apps/index';

export interface LocalDesktopOptions {
  /** Stable within the host, e.g. `local-1/0`. */
  readonly id: string;
  /** X display number (the host's displayBase + the desktop's index). */
  readonly display: number;
  readonly screen: Screen;
  readonly apps: readonly LocalApp[];
  /** Per software (a task's `type`): how to drive and read the app. */
  readonly drivers: Readonly<Record<string, AppDriver>>;
  /** The desktop's own folder (HOME, sockets, logs). */
  readonly dir: string;
  readonly tools: DesktopTools;
  readonly typingDelayMs: number;
}

/** An app this desktop started, with the localApps entry and the driver it runs by. */
interface RunningApp {
  readonly process: ManagedProcess;
  readonly config: LocalApp;
  readonly driver: AppDriver;
}

/**
 * A desktop on this machine: its own Xvfb display, window manager, D-Bus session and AT-SPI bus
 * (x11-display.ts), its own HOME, and the real apps a task launches, started from
 * config.localApps (a cross-application task runs several, e.g. TeXstudio and KAlgebra). reset()
 * restarts them from a clean HOME and replays the task's `initialize` steps; act() performs real
 * input events with xdotool. The task's own app (its `type`) is the one whose driver reads the
 * state for the checks. Every failure is a DesktopError naming the task and the step, and the
 * next reset() starts over from whatever is left (a new display if the old one died).
 */
export class LocalDesktop implements Desktop {
  readonly id: string;
  readonly screen: Screen;
  /** Tags every process this desktop starts (see killMarked). */
  private readonly marker: string;
  private display: X11Display | undefined;
  /** The running apps by software, in launch order. */
  private readonly apps = new Map<string, RunningApp>();
  /** The software of the task being reset or run: its app is `this.app`. */
  private mainSoftware: string | undefined;
  private task: Task | undefined;
  private actions = 0;
  /** False after a reset that did not finish: the desktop is in no known state. */
  private trusted = true;

  constructor(private readonly options: LocalDesktopOptions) {
    this.id = options.id;
    this.screen = options.screen;
    this.marker = desktopMarker(options.id);
  }

  async reset(task: Task): Promise<void> {
    this.task = undefined;
    this.actions = 0;
    this.trusted = false;
    const taskId = typeof task?.id === 'string' ? task.id : undefined;
    const fail = (step: string, err: unknown, permanent = false): DesktopError =>
      err instanceof DesktopError ? err : new DesktopError(messageOf(err), this.id, taskId, step, permanent);

    let parsed: Task;
    try {
      const { id, ...raw } = task;
      parsed = parseTask(APPS, raw, id);
    } catch (err) {
      throw fail('validate', err, true);
    }
    let taskApps: TaskApps;
    try {
      taskApps = localAppsFor(parsed, this.options.apps);
      for (const app of new Set([taskApps.main, ...taskApps.launches.values()])) this.driverOf(app.software);
    } catch (err) {
      throw fail(err instanceof UnknownAppError ? err.step : 'launch', err, true);
    }

    let display: X11Display;
    try {
      await this.stopApps();
      this.mainSoftware = parsed.type;
      display = await this.ensureDisplay();
      rmSync(display.home, { recursive: true, force: true });
      mkdirSync(display.home, { recursive: true });
    } catch (err) {
      throw fail('prepare desktop', err);
    }

    for (const [i, step] of parsed.initialize.entries()) {
      const name = `initialize[${i}] ${step.func}`;
      const started = Date.now();
      try {
        await this.initializeStep(step, i, parsed, taskApps, display);
      } catch (err) {
        throw fail(name, err);
      }
      const waitMs = Math.min(step.wait ?? 0, (taskApps.launches.get(i) ?? taskApps.main).maxStepWaitSeconds) * 1000 - (Date.now() - started);
      if (waitMs > 0) await sleep(waitMs);
    }
    this.task = parsed;
    this.trusted = true;
  }

  async screenshot(): Promise<Buffer> {
    const display = this.requireDisplay(this.task?.id, 'screenshot');
    try {
      return await captureScreen(display.name);
    } catch (err) {
      throw new DesktopError(display.problem() ?? messageOf(err), this.id, this.task?.id, 'screenshot');
    }
  }

  async act(action: GuiAction): Promise<void> {
    this.actions += 1;
    const step = `act #${this.actions} ${action.type}`;
    const task = this.task;
    if (task === undefined) throw new DesktopError('act() before a successful reset()', this.id, undefined, step);
    if (isTerminal(action)) return;
    // After the agent closed the app, its input goes to the empty screen, as in a VM.
    const { display, app } = this.appClosed() ? { display: this.requireDisplay(task.id, step), app: undefined } : this.requireRunningApp(task.id, step);
    const events = toInputEvents(action); // a RenderError is the action's fault, not the desktop's: it goes up as it is
    const perform = (): Promise<void> => this.perform(display, events, app?.process.pid);
    try {
      await (app?.driver.watchInput?.(events, this.session(display, app.process), perform) ?? perform());
    } catch (err) {
      throw new DesktopError(display.problem() ?? messageOf(err), this.id, task.id, step);
    }
  }

  async pointer(): Promise<Point> {
    const display = this.requireDisplay(this.task?.id, 'pointer');
    try {
      return await pointerLocation({ xdotool: this.options.tools.xdotool, env: display.env() });
    } catch (err) {
      throw new DesktopError(display.problem() ?? messageOf(err), this.id, this.task?.id, 'pointer');
    }
  }

  async evaluate(task: Task, stop: StopInfo): Promise<EvaluationResult> {
    const step = 'evaluate';
    if (this.task === undefined || this.task.id !== task.id) {
      throw new DesktopError(`the desktop was reset for ${this.task?.id ?? 'no task'}, not for this task`, this.id, task.id, step);
    }
    const closed = this.app;
    if (closed !== undefined && this.appClosed()) {
      // The checks that read files still hold; those that ask the app fail, as in a VM whose app is gone.
      const session = this.session(this.requireDisplay(task.id, step), closed.process);
      return closed.driver.evaluate(task, stop, session).catch((err: unknown) => appGoneChecks(task, stop, `${closed.config.software} was closed before the checks (${messageOf(err)})`));
    }
    const { display, app } = this.requireRunningApp(task.id, step);
    try {
      return await app.driver.evaluate(task, stop, this.session(display, app.process));
    } catch (err) {
      throw new DesktopError(this.appProblem() ?? messageOf(err), this.id, task.id, step);
    }
  }

  async healthy(): Promise<boolean> {
    if (!this.trusted) return false;
    if (this.display === undefined) return true;
    if (this.display.problem() !== undefined || this.app === undefined) return false;
    // Any app gone (the agent closed one, or it crashed) leaves the desktop in no state a reset expects.
    if ([...this.apps.values()].some((app) => app.process.problem() !== undefined)) return false;
    return this.app.driver.responsive(this.session(this.display, this.app.process));
  }

  /** The display's AT-SPI reader, which the drivers read the apps through (tests and benchmarks read them as the drivers do). */
  atspiReader(): AtspiReader {
    return this.requireDisplay(this.task?.id, 'read the accessibility tree').atspi;
  }

  async close(): Promise<void> {
    this.task = undefined;
    try {
      await this.stopApps();
      await this.display?.stop();
    } finally {
      this.display = undefined;
      const survivors = await killMarked(this.marker);
      if (survivors.length > 0) throw new DesktopError(`processes ${survivors.join(', ')} survived SIGKILL`, this.id, undefined, 'close');
    }
  }

  private async initializeStep(step: InitializeStep, index: number, task: Task, taskApps: TaskApps, display: X11Display): Promise<void> {
    switch (step.func) {
      case 'launch': {
        const config = taskApps.launches.get(index);
        if (config === undefined) throw new Error('no localApps entry for this launch');
        return this.launch(step, config, this.driverOf(config.software), display);
      }
      case 'touch':
        return writeHomeFile(step.path, display.home, step.text);
      case 'execute':
        return runVmCommand(step, display.home);
      default: {
        const software = stepSoftware(step.func, task);
        const app = this.apps.get(software);
        if (app === undefined) throw new Error(`${step.func} needs ${software}, and no launch of it came before`);
        return app.driver.initialize(step, this.session(display, app.process));
      }
    }
  }

  private driverOf(software: string): AppDriver {
    const driver = this.options.drivers[software];
    if (driver === undefined) throw new UnknownAppError(`no app driver for software "${software}"`, 'launch');
    return driver;
  }

  /** Starts the app (again, when it runs already: a VM's second launch gives a fresh one too) and waits until its driver finds it ready. */
  private async launch(step: LaunchStep, config: LocalApp, driver: AppDriver, display: X11Display): Promise<void> {
    const previous = this.apps.get(config.software);
    this.apps.delete(config.software);
    await previous?.process.stop();
    const [command = '', ...configured] = config.command;
    const taskArgs = driver.launchArgs(step, display.home);
    const started = ManagedProcess.start({
      name: config.software,
      command,
      args: [...configured, ...taskArgs],
      env: { ...display.env(), ...driver.env, ...config.env },
      cwd: display.home,
      log: path.join(display.logDir, 'app.log'),
    });
    this.apps.set(config.software, { process: started, config, driver });
    const timeoutMs = config.startTimeoutSeconds * 1000;
    const exited = started.exited.then((exit) => new Error(`${config.software} ${describeExit(exit)} while starting (log: ${path.join(display.logDir, 'app.log')})`));
    const failure = await Promise.race([driver.ready(this.session(display, started), taskArgs, timeoutMs, () => started.running).then(() => undefined), exited]);
    if (failure !== undefined) throw failure;
  }

  /** The display, started unless it runs with every part alive; a broken one is replaced. */
  private async ensureDisplay(): Promise<X11Display> {
    if (this.display !== undefined && this.display.problem() === undefined) return this.display;
    await this.display?.stop();
    this.display = undefined;
    const survivors = [...(await killMarked(this.marker)), ...(await killOrphans(this.id))];
    // A worker that crashed left this desktop's display behind: it would hold the display number.
    if (survivors.length > 0) throw new Error(`earlier processes of this desktop survived SIGKILL: ${survivors.join(', ')}`);
    const display = new X11Display({
      display: this.options.display,
      screen: this.options.screen,
      dir: this.options.dir,
      marker: this.marker,
      tools: this.options.tools,
    });
    this.display = display;
    try {
      await display.start();
    } catch (err) {
      await display.stop();
      this.display = undefined;
      throw err;
    }
    return display;
  }

  /** The task's own app, once launched. */
  private get app(): RunningApp | undefined {
    return this.mainSoftware === undefined ? undefined : this.apps.get(this.mainSoftware);
  }

  /** Stops every app, the last launched first. */
  private async stopApps(): Promise<void> {
    const running = [...this.apps.values()].reverse();
    this.apps.clear();
    this.mainSoftware = undefined;
    for (const app of running) await app.process.stop();
  }

  private requireDisplay(taskId: string | undefined, step: string): X11Display {
    const display = this.display;
    if (display === undefined) throw new DesktopError('the desktop is not started: reset() it first', this.id, taskId, step);
    const problem = display.problem();
    if (problem !== undefined) throw new DesktopError(`the X display is broken: ${problem}`, this.id, taskId, step);
    return display;
  }

  private requireRunningApp(taskId: string, step: string): { display: X11Display; app: NonNullable<LocalDesktop['app']> } {
    const display = this.requireDisplay(taskId, step);
    const problem = this.appProblem();
    if (problem !== undefined || this.app === undefined) throw new DesktopError(problem ?? 'no app is running', this.id, taskId, step);
    return { display, app: this.app };
  }

  /** The app exited by itself with status 0 after a finished reset: the agent closed it, which is the episode's doing, not a fault. */
  private appClosed(): boolean {
    const exit = this.app?.process.exit;
    return this.task !== undefined && exit !== undefined && exit.code === 0 && exit.signal === null;
  }

  /** Undefined while the app runs; else what happened to it. */
  private appProblem(): string | undefined {
    const app = this.app;
    if (app === undefined) return undefined;
    const problem = app.process.problem();
    return problem === undefined ? undefined : `${app.config.software} (pid ${app.process.pid}) ${problem}`;
  }

  private session(display: X11Display, app: ManagedProcess): AppSession {
    return {
      env: display.env(),
      home: display.home,
      screen: display.screen,
      appPid: app.pid,
      atspi: display.atspi,
      input: (events) => this.perform(display, events, app.pid),
      screenshot: () => captureScreen(display.name),
      pixels: (region) => capturePixels(display.name, region),
    };
  }

  /** Performs input events on the display; where they wait for the app to catch up, they wait for `appPid`. */
  private perform(display: X11Display, events: readonly InputEvent[], appPid?: number): Promise<void> {
    const options = { xdotool: this.options.tools.xdotool, env: display.env(), typingDelayMs: this.options.typingDelayMs };
    return performInputEvents(events, appPid === undefined ? options : { ...options, untilAppIdle: (maxMs: number) => untilIdle(appPid, maxMs) });
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The checks of a task whose app is gone: `stop` as usual, every other one failed with `why`. */
function appGoneChecks(task: Task, stop: StopInfo, why: string): EvaluationResult {
  return combineChecks(task.evaluate.map((check, index) => (check.type === 'stop' ? evaluateStop(check, index, stop) : { index, type: check.type, passed: false, detail: why })));
}

export interface LocalDesktopsOptions {
  /** Each desktop gets `<dir>/<host id>-<index>`; default: the OS temp dir's coda-desktops/. */
  readonly dir?: string;
  readonly drivers?: Readonly<Record<string, AppDriver>>;
  readonly tools?: DesktopTools;
  readonly typingDelayMs?: number;
}

/** The desktops of a local host: desktop i on display displayBase + i, nothing started until its first reset(). */
export function createLocalDesktops(host: LocalHostConfig, apps: readonly LocalApp[], options: LocalDesktopsOptions = {}): LocalDesktop[] {
  return Array.from({ length: host.desktops }, (_, i) => createLocalDesktop(host, apps, i, options));
}

/** Desktop `index` of the host: display displayBase + index, its own directory under `dir`. */
export function createLocalDesktop(host: LocalHostConfig, apps: readonly LocalApp[], index: number, options: LocalDesktopsOptions = {}): LocalDesktop {
  return new LocalDesktop({
    id: `${host.id}/${index}`,
    display: host.displayBase + index,
    screen: host.screen,
    apps,
    drivers: options.drivers ?? defaultDrivers(),
    dir: path.join(options.dir ?? path.join(os.tmpdir(), 'coda-desktops'), `${host.id}-${index}`),
    tools: options.tools ?? DEFAULT_TOOLS,
    typingDelayMs: options.typingDelayMs ?? 12,
  });
}
