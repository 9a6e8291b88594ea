import type { InputEvent } from '../../../core/actions';
import type { AppDriver, AppSession } from '../../local-driver';
import { waitFor } from '../../../io/process';
import { calgebra } from './calgebra';
import { evaluateKAlgebra } from './evaluators';
import { readKAlgebraState, readKAlgebraView, type KAlgebraView, type RunningKAlgebraState } from './state';
import { viewChanged, viewPrint } from './surface';

export interface KAlgebraDriverOptions {
  readonly calgebra: string;
  /** How long one read of the accessibility tree may take before the app counts as hung. */
  readonly stateTimeoutMs: number;
}

export const DEFAULT_KALGEBRA_OPTIONS: KAlgebraDriverOptions = { calgebra: 'calgebra', stateTimeoutMs: 10_000 };

/** The main tabs, in the order of ScienceBoard's `tab` index. */
export const KALGEBRA_TABS = ['Calculator', '2D Graph', '3D Graph', 'Dictionary'] as const;

const STEP_TIMEOUT_MS = 8_000;
const CALGEBRA_TIMEOUT_MS = 30_000;

/** Input that presses Enter, which is what plots the 3D field's expression. */
const pressesEnter = (events: readonly InputEvent[]): boolean =>
  events.some((e) => (e.kind === 'key' && /(^|\+)(Return|KP_Enter)$/i.test(e.chord)) || (e.kind === 'type' && /\r?\n/.test(e.text)));

/** Replaces the text of a focused expression field and presses Enter. */
const enter = (text: string): InputEvent[] => [
  { kind: 'key', chord: 'ctrl+a' },
  { kind: 'type', text },
  { kind: 'key', chord: 'Return' },
];

type Box = { x: number; y: number; width: number; height: number };

/**
 * KAlgebra driven through its GUI: reads of its accessibility tree, clicks at what the tree
 * reports, and the one thing the tree cannot say, the 3D surface plotted last (by pid).
 */
class KAlgebraGui {
  /** The expression of the surface this KAlgebra (by pid) plotted last, as its 3D field read then. */
  private surface: { readonly pid: number; readonly expression: string } | undefined;

  constructor(readonly options: KAlgebraDriverOptions) {}

  async read(session: AppSession, timeoutMs = this.options.stateTimeoutMs): Promise<RunningKAlgebraState> {
    const state = await readKAlgebraState({ reader: session.atspi, pid: session.appPid, timeoutMs });
    if (!state.app) throw new Error('KAlgebra is not on the accessibility bus');
    return state;
  }

  /** The view only (window, tabs, calculator field, 3D box): what waits poll, a few times cheaper than `read`. */
  view(session: AppSession): Promise<KAlgebraView> {
    return readKAlgebraView({ reader: session.atspi, pid: session.appPid, timeoutMs: this.options.stateTimeoutMs });
  }

  clickAt(session: AppSession, box: Box): Promise<void> {
    return session.input([
      { kind: 'move', x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) },
      { kind: 'click', button: 1, count: 1 },
    ]);
  }

  until(session: AppSession, test: (s: RunningKAlgebraState) => boolean, what: () => string): Promise<RunningKAlgebraState> {
    let last: RunningKAlgebraState | undefined;
    return waitFor(
      async () => {
        last = await this.read(session);
        return test(last) ? last : undefined;
      },
      STEP_TIMEOUT_MS,
      () => `${what()} (status bar: ${JSON.stringify(last?.statusBar ?? '')})`,
      150,
    );
  }

  /** Opens the tab unless `state` shows it open; returns the state with the tab open. */
  async openTab(session: AppSession, state: RunningKAlgebraState, name: string): Promise<RunningKAlgebraState> {
    if (state.mainTabs?.current === name) return state;
    const tab = state.mainTabs?.tabs.find((t) => t.name === name);
    if (tab === undefined) throw new Error(`KAlgebra has no "${name}" tab`);
    await this.clickAt(session, tab);
    // Waited for with the view's reads (the tabs only), then the whole state read once.
    let shown: string | undefined;
    await waitFor(
      async () => {
        const view = await this.view(session);
        shown = view.app ? view.mainTabs?.current : undefined;
        return shown === name ? true : undefined;
      },
      STEP_TIMEOUT_MS,
      () => `the "${name}" tab did not open (the "${shown ?? 'no'}" tab shows)`,
      150,
    );
    return this.read(session);
  }

  async plot2d(session: AppSession, start: RunningKAlgebraState, expression: string): Promise<RunningKAlgebraState> {
    let state = await this.openTab(session, start, '2D Graph');
    const before = state.functions.length;
    if (state.functionsDockTabs?.current !== 'Add') {
      const add = state.functionsDockTabs?.tabs.find((t) => t.name === 'Add');
      if (add === undefined) throw new Error('the Functions dock has no Add tab');
      await this.clickAt(session, add);
      state = await this.until(session, (s) => s.functionEditor?.showing === true, () => 'the function editor did not open');
    }
    const editor = state.functionEditor;
    if (editor === null) throw new Error('the function editor is missing');
    await this.clickAt(session, editor);
    await session.input(enter(expression));
    return this.until(session, (s) => s.functions.length === before + 1, () => `KAlgebra did not add ${JSON.stringify(expression)} to the function list`);
  }

  plotted3d(session: AppSession): string | undefined {
    return this.surface?.pid === session.appPid ? this.surface.expression : undefined;
  }

  /** Performs input on the 3D Graph tab; when the 3D view draws a new picture, the field's expression is what it plots. */
  async watch3d(session: AppSession, before: KAlgebraView, perform: () => Promise<void>): Promise<boolean> {
    const view = before.app ? before.view3d : null;
    if (!before.app || before.mainTabs?.current !== '3D Graph' || view === null || view.width <= 0 || view.height <= 0) {
      await perform();
      return false;
    }
    const grab = async (): Promise<string> => viewPrint(await session.pixels(view));
    const was = await grab();
    await perform();
    if (!(await viewChanged(grab, was))) return false;
    this.surface = { pid: session.appPid, expression: ((await this.read(session)).input3d?.text ?? '').trim() };
    return true;
  }

  async plot3d(session: AppSession, start: RunningKAlgebraState, expression: string): Promise<RunningKAlgebraState> {
    const field = (await this.openTab(session, start, '3D Graph')).input3d;
    if (field === null || !field.showing) throw new Error('the 3D expression field is not shown');
    await this.clickAt(session, field);
    const drawn = await this.watch3d(session, await this.read(session), () => session.input(enter(expression)));
    const state = await this.read(session);
    // A refused expression leaves the view as it was and "Errors: ..." in the status bar.
    if (!drawn && this.plotted3d(session) !== expression) throw new Error(`KAlgebra did not plot the 3D function ${JSON.stringify(expression)} (status bar: ${JSON.stringify(state.statusBar)})`);
    return state;
  }

  /** Plots and comes back to the tab that was open, as the VMs' server leaves the tab alone. */
  async keepingTab(session: AppSession, plot: (start: RunningKAlgebraState) => Promise<RunningKAlgebraState>): Promise<void> {
    const start = await this.read(session);
    const after = await plot(start);
    const tab = start.mainTabs?.current;
    if (tab !== undefined) await this.openTab(session, after, tab);
  }

  /** Waits until KAlgebra's window is maximized with its tabs and calculator shown. */
  ready(session: AppSession, timeoutMs: number, running: () => boolean): Promise<unknown> {
    let seen = 'nothing on the accessibility bus';
    return waitFor(
      async () => {
        if (!running()) throw new Error('KAlgebra is gone');
        const view = await this.view(session).catch(() => undefined);
        if (view === undefined || !view.app) return undefined;
        const { width, height } = view.window;
        seen = `window ${width}x${height}, tabs ${view.mainTabs === null ? 'missing' : 'present'}`;
        const maximized = width === session.screen.width && height === session.screen.height;
        return maximized && view.mainTabs !== null && view.calculatorInput?.showing === true ? true : undefined;
      },
      timeoutMs,
      () => `KAlgebra's window was not ready (maximized, tabs shown) within ${timeoutMs / 1000} s: ${seen}`,
      200,
    );
  }
}

/**
 * Debian's stock KAlgebra on a local desktop. The VMs' modified KAlgebra switches tabs and plots
 * through its HTTP server; here the same steps go through the GUI with real input events, at
 * the positions the accessibility tree reports, and each is checked in the tree afterwards.
 *
 * The 3D surface KAlgebra plots is known to no part of its accessibility tree: the field shows
 * what was typed, plotted or not. So the driver watches every input that presses Enter on the
 * 3D Graph tab and records the field's expression as plotted when the 3D view drew a new
 * picture (surface.ts). A surface plotted from the calculator's result menu is not seen.
 */
export function createKAlgebraDriver(options: KAlgebraDriverOptions = DEFAULT_KALGEBRA_OPTIONS): AppDriver {
  const gui = new KAlgebraGui(options);
  return {
    env: {
      QT_ACCESSIBILITY: '1',
      QT_LINUX_ACCESSIBILITY_ALWAYS_ON: '1',
      // The calculator's log is a web view; its text reaches the accessibility tree only with this.
      // Drawn without OpenGL (Chromium's software compositing, Qt Quick's software renderer): on a
      // display with no GPU, Mesa's llvmpipe drew the whole window, compiling its shaders again at
      // every launch, about 0.25 s of CPU a reset and 14% of the learning loop's (docs/tests.md).
      // The 3D Graph is an OpenGL widget of its own and still draws with Mesa.
      QTWEBENGINE_CHROMIUM_FLAGS: '--force-renderer-accessibility --disable-gpu',
      QT_QUICK_BACKEND: 'software',
    },

    // The VM's launch passes the port of the modified app's state server; the stock app takes nothing.
    launchArgs: () => [],

    async ready(session, _args, timeoutMs, running) {
      await gui.ready(session, timeoutMs, running);
    },

    async initialize(step, session) {
      switch (step.func) {
        case 'tab': {
          const name = KALGEBRA_TABS[step.index];
          if (name === undefined) throw new Error(`no tab ${step.index}`);
          await gui.openTab(session, await gui.read(session), name);
          return;
        }
        case 'func_2d':
          return gui.keepingTab(session, (start) => gui.plot2d(session, start, step.expr));
        case 'func_3d':
          return gui.keepingTab(session, (start) => gui.plot3d(session, start, step.expr));
        default:
          throw new Error(`KAlgebra has no initialize step "${step.func}"`);
      }
    },

    async evaluate(task, stop, session) {
      const state = await gui.read(session);
      return evaluateKAlgebra(task, stop, { ...state, plotted3d: gui.plotted3d(session) }, (lines) =>
        calgebra(lines, { binary: options.calgebra, env: session.env, timeoutMs: CALGEBRA_TIMEOUT_MS }),
      );
    },

    async watchInput(events, session, perform) {
      if (!pressesEnter(events)) return perform();
      const before = await gui.view(session).catch(() => undefined);
      if (before === undefined) return perform();
      await gui.watch3d(session, before, perform);
    },

    async responsive(session) {
      return gui.read(session, 5_000).then(
        () => true,
        () => false,
      );
    },
  };
}
