import type { InputEvent } from '../core/actions';
import type { EvaluationResult, StopInfo } from '../core/evaluation';
import type { InitializeStep, Task } from '../core/task';
import type { Env } from '../io/process';
import type { AtspiReader } from '../io/atspi';
import type { Region, RgbImage } from '../io/x11-image';
import type { Size } from '../core/smart-resize';

/** What a running desktop offers an app driver: its environment and HOME, its screen, the app's process, its AT-SPI reader, and real input. */
export interface AppSession {
  readonly env: Env;
  /** The desktop's HOME, where the VM's /home/user paths live (local-apps.ts homePath). */
  readonly home: string;
  readonly screen: Size;
  readonly appPid: number;
  /** The desktop's accessibility reader, for the driver's reads of the app's tree. */
  readonly atspi: AtspiReader;
  input(events: readonly InputEvent[]): Promise<void>;
  /** The screen as PNG bytes. */
  screenshot(): Promise<Buffer>;
  /** The pixels of a part of the screen, as RGB: what a driver watching one widget reads (no PNG made and read back). */
  pixels(region: Region): Promise<RgbImage>;
}

export type LaunchStep = Extract<InitializeStep, { func: 'launch' }>;

/** The `initialize` steps a driver performs: everything but launch, touch and execute, which the desktop does itself. */
export type AppStep = Exclude<InitializeStep, { func: 'launch' | 'touch' | 'execute' }>;

/**
 * What a local desktop needs to know about one app beyond starting it (config.localApps): what
 * it is given at launch, when it is ready, how to perform the task steps that ScienceBoard's VMs
 * perform through the app's own server, and how to read its state for the task's checks. One
 * implementation per app, in a folder of its own (kalgebra/, texstudio/), listed in drivers.ts.
 */
export interface AppDriver {
  /** Environment the app needs on top of the display's and the config's (e.g. accessibility on). */
  readonly env: Env;
  /** The local app's arguments for a task's launch step (e.g. the documents to open, as paths in `home`); throws for what it cannot take. */
  launchArgs(step: LaunchStep, home: string): string[];
  /**
   * Resolves once the app's window is up, maximized and readable (with the launched documents
   * open); throws saying what is missing, or as soon as `running()` turns false.
   */
  ready(session: AppSession, args: readonly string[], timeoutMs: number, running: () => boolean): Promise<void>;
  /** Performs one of the app's own `initialize` steps; throws when the app did not take it, or has no such step. */
  initialize(step: AppStep, session: AppSession): Promise<void>;
  /** Runs the task's `evaluate` checks against the app's real state. */
  evaluate(task: Task, stop: StopInfo, session: AppSession): Promise<EvaluationResult>;
  /** True when the app answers a state query in time (a hung app does not). */
  responsive(session: AppSession): Promise<boolean>;
  /**
   * Performs an action's input events through `perform`, for a driver that must see what they
   * did (KAlgebra: whether an entered 3D expression was plotted). Without it, the desktop performs them.
   */
  watchInput?(events: readonly InputEvent[], session: AppSession, perform: () => Promise<void>): Promise<void>;
}
