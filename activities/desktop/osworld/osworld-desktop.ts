import { setTimeout as sleep } from 'node:timers/promises';
import { downloadSettings, type OsworldHostConfig, type OsworldVmConfig } from '../../../config/schema';
import type { GuiAction, Point } from '../../../core/actions';
import { isTerminal } from '../../../core/episode';
import { appNotRunning, combineChecks, evaluateStop, type CheckResult, type EvaluationResult, type StopInfo } from '../../../core/evaluation';
import { pyautoguiCommand, toPyautogui } from '../../../core/render/pyautogui';
import { checkFile, checkInclude, usesBibtex } from '../../../apps/texstudio/checks';
import type { InitializeStep, Task } from '../../../core/task';
import { DesktopError, DesktopLostError, type Desktop } from '../desktop';
import { vmAppOf } from '../../../apps/vm-apps';
import { evaluateChecks } from '../../../io/predicates/sandbox';
import type { EvaluatePredicates, VmAppContext, VmAppSession } from '../../../apps/vm-app';
import { createOsworldClient, type ExecuteResult, type OsworldClient } from '../../../io/osworld-client';
import { download } from './download';
import { createVmHttp, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../../io/vm-http';
import { VmHttpError } from '../../../io/vm-http-error';
import { checkPlot, checkValue, checkVariable, plotQuery } from '../../../apps/kalgebra/checks';
import { createKalgebraState, type KalgebraState } from '../../../apps/kalgebra/vm';
import { CommandVmProvider, type VmProvider } from './vm-provider';

/** What ScienceBoard's launch commands hold where the app's state-server port goes. */
export const PORT_PLACEHOLDER = '«PORTLIKE»';

/** Where ScienceBoard's VM image keeps its reset script (vm_config/reset.sh: restarts the network after a revert). */
export const SCIENCEBOARD_RESET_SCRIPT = '/home/user/server/reset.sh';

export interface OsworldDesktopOptions {
  /** Stable within its host, e.g. `rack-3/0`. */
  readonly id: string;
  readonly vm: OsworldVmConfig;
  readonly provider: VmProvider;
  readonly client: OsworldClient;
  readonly appState: KalgebraState;
  /** After a revert, how long the in-VM server may take to answer. */
  readonly readyTimeoutMs: number;
  /** Between readiness probes. */
  readonly pollIntervalMs?: number;
  /** ScienceBoard pauses this long before each `initialize` step so the app can settle. */
  readonly stepPauseMs?: number;
  /** The VM's own reset script, run after each revert when the VM has it. */
  readonly resetScript?: string;
  /** After the task's initialize steps, how long the app's state server may take to answer. */
  readonly appReadyTimeoutMs?: number;
  /** Screenshots failing in a row that make the VM lost (5 by default). */
  readonly screenshotAttempts?: number;
  /** Pause after a failed screenshot, doubled after each further one (1 s by default: 15 s over 5 attempts). */
  readonly screenshotBackoffMs?: number;
  /** The share of each initialize step's `wait` slept (1: as ScienceBoard). */
  readonly waitScale?: number;
  /** Evaluates the Python `key`/`pred` checks of the apps (the predicate sandbox). */
  readonly predicates?: EvaluatePredicates;
  /** Retry policy of the requests to the VM's and the app's servers made for the apps' funcs and checks (its timeout: appTimeoutMs). */
  readonly appPolicy?: Partial<RetryPolicy>;
  /**
   * How long each request to the app's server, or to the VM's server on the app's behalf (a dump's
   * or a checked file's /read, /tex/check, /chimerax/run, /lean/check), may take (APP_TIMEOUT_MS by default).
   */
  readonly appTimeoutMs?: number;
  /**
   * Fetches a `download` func's URL on this host, as ScienceBoard does before copying the file into
   * the VM (the VM may have no network): the bytes, or a thrown error. By default public
   * addresses only (download.ts), as hosts[].downloads says when none is listed.
   */
  readonly fetchUrl?: (url: string) => Promise<Buffer>;
}

/** ScienceBoard's Manager.HOMO_TIMEOUT: every request to an app's server, and the VM's on its behalf, may take 240 s. */
export const APP_TIMEOUT_MS = 240_000;

/** How long each check's Python sources may run in the sandbox (ScienceBoard sets none; a predicate is one expression). */
export const PREDICATE_TIMEOUT_MS = 5000;

/** The predicate sandbox (io/predicates/). */
const sandboxPredicates: EvaluatePredicates = (checks, dump) => evaluateChecks(checks, dump, { timeoutMs: PREDICATE_TIMEOUT_MS });

/** How long a `download` may take on the host (ScienceBoard's urlretrieve has no limit; OSWorld's setup waits minutes). */
export const DOWNLOAD_TIMEOUT_MS = 300_000;

const fetchOnHost = (settings = downloadSettings.parse({})) => (url: string): Promise<Buffer> => download(url, { ...settings, timeoutMs: DOWNLOAD_TIMEOUT_MS });

/**
 * A ScienceBoard/OSWorld VM as a Desktop: reset reverts its snapshot and replays the task's
 * `initialize` steps, actions run as pyautogui code through /execute, and checks read the app's
 * own state server (KAlgebra) or the VM's files and its /tex/check compiler (TeXstudio).
 */
export class OsworldDesktop implements Desktop {
  readonly id: string;
  readonly screen: { readonly width: number; readonly height: number };
  private taskId: string | undefined;
  /** The reset's session with the task's app (celestia, chimerax, grassgis, lean), when it has a vm.ts. */
  private session: VmAppSession | undefined;
  private context: VmAppContext | undefined;

  constructor(private readonly options: OsworldDesktopOptions) {
    this.id = options.id;
    this.screen = options.vm.screen;
  }

  async reset(task: Task): Promise<void> {
    this.taskId = task.id;
    const { provider, vm } = this.options;
    try {
      await provider.revert(vm);
    } catch (err) {
      throw this.error(err, 'revert');
    }
    await this.waitUntilReady('the revert');
    await this.runResetScript();
    await this.checkScreen();
    this.session = vmAppOf(task.type)?.session(task, this.appContext());
    for (const [i, step] of task.initialize.entries()) {
      await sleep(this.options.stepPauseMs ?? 1000);
      try {
        await this.initialize(step);
      } catch (err) {
        throw this.error(err, `initialize[${i}] ${step.func}`);
      }
      if (step.wait) await sleep(step.wait * 1000 * (this.options.waitScale ?? 1));
    }
    // The modified apps have a state server to probe (KAlgebra's /version); TeXstudio is the stock app.
    if (task.type === 'KAlgebra') await this.waitForApp();
    const session = this.session;
    if (session?.ready !== undefined) {
      await this.poll(
        (timeoutMs) => session.ready?.(timeoutMs) ?? Promise.resolve(),
        this.options.appReadyTimeoutMs ?? 30_000,
        `${task.type}'s server in the VM`,
        "after the task's initialize steps (does the VM image have ScienceBoard's build of the app?)",
        'app state',
      );
    }
  }

  /**
   * The screen as a complete PNG. The in-VM server may answer a broken image, a 500 (out of X
   * clients: it leaks one per screenshot) or, having crashed, nothing until systemd restarts it
   * some 5 s later; so a failed screenshot is tried again after a pause that doubles, and a VM
   * whose screenshots fail `screenshotAttempts` times in a row is lost. The tries are these alone
   * (none within the client), so a server that never answers is lost after that many timeouts.
   */
  async screenshot(): Promise<Buffer> {
    const { client, screenshotAttempts = 5, screenshotBackoffMs = 1000 } = this.options;
    let last: VmHttpError | undefined;
    for (let attempt = 1; attempt <= screenshotAttempts; attempt++) {
      if (last !== undefined) await sleep(screenshotBackoffMs * 2 ** (attempt - 2));
      try {
        return await client.screenshot({ retries: 0 });
      } catch (err) {
        if (!(err instanceof VmHttpError)) throw this.error(err, 'screenshot');
        last = err;
      }
    }
    throw new DesktopLostError(`${screenshotAttempts} screenshots in a row failed; last: ${last?.message}`, this.id, this.taskId, 'screenshot');
  }

  async act(action: GuiAction): Promise<void> {
    if (isTerminal(action)) return;
    const { command } = pyautoguiCommand(toPyautogui(action));
    let result: ExecuteResult;
    try {
      result = await this.options.client.execute(command, { shell: false });
    } catch (err) {
      throw this.error(err, `act ${action.type}`);
    }
    if (result.returncode !== 0) {
      const said = (result.error || result.output).trim().slice(-500);
      throw this.error(new Error(`pyautogui exited with ${result.returncode}${said ? `: ${said}` : ''}`), `act ${action.type}`);
    }
  }

  /** GET /cursor_position; the released server answers it 500, and the client asks the VM's pyautogui instead. */
  async pointer(): Promise<Point> {
    try {
      return await this.options.client.cursorPosition();
    } catch (err) {
      throw this.error(err, 'pointer');
    }
  }

  async evaluate(task: Task, stop: StopInfo): Promise<EvaluationResult> {
    const app = vmAppOf(task.type);
    if (app !== undefined) return this.evaluateApp(task, stop, app.session(task, this.appContext()));
    const { appState } = this.options;
    let variables: Promise<Record<string, string>> | undefined;
    let gone = false;
    const checks: CheckResult[] = [];
    for (const [index, check] of task.evaluate.entries()) {
      if (check.type === 'stop') {
        checks.push(evaluateStop(check, index, stop));
        continue;
      }
      try {
        switch (check.type) {
          case 'eqn': {
            const { dimensions, points } = plotQuery(check);
            checks.push(checkPlot(check, index, await appState.functions(dimensions, points)));
            break;
          }
          case 'var':
          case 'val': {
            variables ??= appState.variables();
            const vars = await variables;
            checks.push(check.type === 'var' ? checkVariable(check, index, vars) : checkValue(check, index, vars));
            break;
          }
          case 'file':
          case 'include': {
            if (!('path' in check)) {
              checks.push({ index, type: check.type, passed: false, detail: `this host does not read ${task.type}'s "${check.type}" checks` });
              break;
            }
            const text = await this.readVmFile(check.path, this.appContext().appTimeoutMs);
            const found = 'text' in text ? text.text : undefined;
            const problem = 'problem' in text ? text.problem : undefined;
            checks.push(check.type === 'file' ? checkFile(task, check, index, found, problem) : checkInclude(check, index, found, problem));
            break;
          }
          case 'compile': {
            const passed = await this.options.client.texCheck(check.path, check.file, usesBibtex(task), { timeoutMs: this.appContext().appTimeoutMs });
            const runs = usesBibtex(task) ? 'pdflatex, bibtex, pdflatex, pdflatex' : 'pdflatex';
            checks.push({ index, type: 'compile', passed, detail: `${runs} of ${check.file}.tex in ${check.path} ${passed ? 'succeeded' : 'failed'} (the VM's /tex/check)` });
            break;
          }
          default:
            checks.push({ index, type: check.type, passed: false, detail: `this host does not read ${task.type}'s "${check.type}" checks` });
        }
      } catch (err) {
        // A refused connection means the app is gone (the agent may have closed it): not solved,
        // its own outcome (ScienceBoard fails the check). Anything else is the VM's fault, not the agent's.
        if (err instanceof VmHttpError && err.code === 'ECONNREFUSED') {
          gone = true;
          checks.push({ index, type: check.type, passed: false, detail: `the app's state server refused the connection (app not running): ${err.message}` });
        } else {
          throw this.error(err, `evaluate[${index}] ${check.type}`, task.id);
        }
      }
    }
    return gone ? appNotRunning(task.type, checks) : combineChecks(checks);
  }

  /**
   * The checks of an app with a vm.ts: `stop` here, the rest read from the app as its vm.ts says.
   * An app that refuses the connection (or that the VM's server cannot reach: ChimeraX behind
   * /chimerax/run) is not running: the attempt is not solved, and that is its outcome (ScienceBoard
   * fails such a task, or for ChimeraX skips it: docs/scoring.md). Any other failure to read its
   * state is the VM's fault.
   */
  private async evaluateApp(task: Task, stop: StopInfo, session: VmAppSession): Promise<EvaluationResult> {
    const checks: CheckResult[] = [];
    const own: Array<{ index: number; check: Readonly<Record<string, unknown>> }> = [];
    for (const [index, check] of task.evaluate.entries()) {
      if (check.type === 'stop') checks.push(evaluateStop(check, index, stop));
      else own.push({ index, check: check as unknown as Readonly<Record<string, unknown>> });
    }
    try {
      checks.push(...(await session.evaluate(own)));
    } catch (err) {
      if (!appGone(err)) throw this.error(err, `evaluate ${task.type}`, task.id);
      const detail = `${task.type} is not running (its server does not answer): ${(err as Error).message}`;
      checks.push(...own.map(({ index, check }) => ({ index, type: check.type as CheckResult['type'], passed: false, detail })));
      return appNotRunning(task.type, checks.sort((a, b) => a.index - b.index));
    }
    return combineChecks(checks.sort((a, b) => a.index - b.index));
  }

  /** The apps' view of this VM, made once: its servers' clients keep one request at a time each, as the VM's server needs. */
  private appContext(): VmAppContext {
    if (this.context !== undefined) return this.context;
    const { vm, client, appPolicy, appTimeoutMs = APP_TIMEOUT_MS } = this.options;
    const policy = { ...DEFAULT_RETRY_POLICY, timeoutMs: appTimeoutMs, ...appPolicy };
    this.context = {
      client,
      vmHttp: createVmHttp(vm.url, policy),
      appHttp: createVmHttp(appStateUrl(vm), policy),
      appPort: vm.appStatePort,
      appTimeoutMs: policy.timeoutMs,
      predicates: this.options.predicates ?? sandboxPredicates,
    };
    return this.context;
  }

  /** The server answers and its X display does: /screen_size opens a connection to it. */
  async healthy(): Promise<boolean> {
    try {
      await this.options.client.screenSize({ timeoutMs: 5000, retries: 0 });
      return true;
    } catch {
      return false;
    }
  }

  /** Nothing runs on this host for a VM: the VM itself is the hypervisor's to stop. */
  async close(): Promise<void> {}

  /** A VM file's text; a file the server cannot read (Flask answers 500) is the task's failure, not the VM's. */
  private async readVmFile(path: string, timeoutMs: number): Promise<{ text: string } | { problem: string }> {
    try {
      return { text: await this.options.client.readFile(path, { timeoutMs }) };
    } catch (err) {
      if (err instanceof VmHttpError && err.failure === 'status' && err.status === 500) return { problem: `the VM's /read failed (${err.message})` };
      throw err;
    }
  }

  private async initialize(step: InitializeStep): Promise<void> {
    const { client, appState, vm } = this.options;
    const fields = step as unknown as Readonly<Record<string, unknown>>;
    switch (fields.func) {
      case 'opt':
        // The VM server's /opt: the accessibility tree's depth (Celestia's tree is deep); any 200 is success.
        await this.appContext().vmHttp.send({ method: 'POST', path: '/opt', json: { depth: fields.depth }, idempotent: true });
        return;
      case 'download':
        return this.download(String(fields.url), String(fields.path));
      case 'append':
        // VTask's _append: the VM server's /append; any 200 is success.
        await this.appContext().vmHttp.send({ method: 'POST', path: '/append', json: { path: fields.path, content: fields.content }, idempotent: false });
        return;
    }
    const func = String(fields.func);
    if (this.session !== undefined && (await this.session.initialize(func, fields))) return;
    const withPort = (command: string | readonly string[]): string | string[] =>
      typeof command === 'string' ? command.replaceAll(PORT_PLACEHOLDER, String(vm.appStatePort)) : command.map((part) => part.replaceAll(PORT_PLACEHOLDER, String(vm.appStatePort)));
    switch (step.func) {
      case 'launch':
        return client.launch(withPort(step.command), { shell: step.shell ?? false });
      case 'execute':
        // As ScienceBoard's /setup/execute: the command's own exit code is not checked (an `rm` of a missing file is fine).
        await client.execute(withPort(step.command), { shell: step.shell ?? false });
        return;
      case 'chimerax_clear_log':
        return this.chimerax('log clear');
      case 'chimerax_open':
        return this.chimerax(`open ${step.name}`);
      case 'chimerax_turn':
        return this.chimerax(`turn ${step.axis} ${step.angle}`);
      case 'tab':
        return appState.selectTab(step.index);
      case 'func_2d':
        return appState.plot(2, step.expr);
      case 'func_3d':
        return appState.plot(3, step.expr);
      case 'touch':
        return client.writeFile(step.path, step.text);
    }
    throw new Error(`func ${JSON.stringify(func)} has no way to run on a ScienceBoard VM`);
  }

  /**
   * A `download` as ScienceBoard's vm_download does it: fetched on this host, then written into
   * the VM at `path` (OSWorld's /setup/upload, as its own setup controller copies files in).
   */
  private async download(url: string, file: string): Promise<void> {
    const bytes = await (this.options.fetchUrl ?? fetchOnHost())(url);
    const form = new FormData();
    form.set('file_path', file);
    form.set('file_data', new Blob([new Uint8Array(bytes)]), file.split('/').pop() ?? 'download');
    await this.appContext().vmHttp.send({ method: 'POST', path: '/setup/upload', form, idempotent: true, timeoutMs: DOWNLOAD_TIMEOUT_MS });
  }

  /**
   * Runs the VM's reset script through /setup/execute when the VM has one, as ScienceBoard does
   * after each revert, then waits for the server again (the script restarts the network). Like
   * ScienceBoard, only the call must succeed: the script exits 1 where no ethernet connection is
   * named, which leaves the network as it was.
   */
  private async runResetScript(): Promise<void> {
    const { client, resetScript = SCIENCEBOARD_RESET_SCRIPT } = this.options;
    try {
      if ((await client.execute(['test', '-f', resetScript])).returncode !== 0) return;
      await client.execute(['/bin/bash', resetScript], { setup: true });
    } catch (err) {
      throw this.error(err, 'reset script');
    }
    await this.waitUntilReady('its reset script');
  }

  private async chimerax(command: string): Promise<void> {
    // ChimeraX's REST server listens on the port its launch command got for «PORTLIKE».
    const error = await this.options.client.chimeraxRun(command, this.options.vm.appStatePort);
    if (error !== null) throw new Error(`ChimeraX refused ${JSON.stringify(command)}: ${error}`);
  }

  /** Actions carry absolute pixels of the configured screen: a VM of another size would get every click wrong. */
  private async checkScreen(): Promise<void> {
    let size: { width: number; height: number };
    try {
      size = await this.options.client.screenSize();
    } catch (err) {
      throw this.error(err, 'screen size');
    }
    if (size.width !== this.screen.width || size.height !== this.screen.height) {
      const expected = `${this.screen.width}x${this.screen.height}`;
      throw this.error(new Error(`the VM's screen is ${size.width}x${size.height}, the configuration says ${expected}`), 'screen size');
    }
  }

  /** Polls the in-VM server until it answers: after a revert the guest boots or resumes first. */
  private async waitUntilReady(after: string): Promise<void> {
    const { client, readyTimeoutMs } = this.options;
    await this.poll((timeoutMs) => client.platform({ timeoutMs, retries: 0 }), readyTimeoutMs, `the in-VM server at ${client.url}`, `after ${after}`, 'wait for VM');
  }

  /**
   * Polls the app's state server (ScienceBoard checks its /version): a launch through a shell
   * answers 200 even when the app is missing, so a VM image without ScienceBoard's modified app
   * fails here, as the VM's fault, instead of scoring the agent's episode zero at evaluation.
   */
  private async waitForApp(): Promise<void> {
    const { appState, appReadyTimeoutMs = 30_000 } = this.options;
    await this.poll(
      (timeoutMs) => appState.version({ timeoutMs, retries: 0 }),
      appReadyTimeoutMs,
      `the app's state server at ${appState.url}`,
      "after the task's initialize steps (does the VM image have ScienceBoard's modified app?)",
      'app state',
    );
  }

  /**
   * Runs `probe` every poll interval until it succeeds; throws naming `what` and the last failure
   * after `timeoutMs`. A try the deadline cut short that timed out says nothing of the server, so it
   * does not hide an earlier answer (how long a loaded machine took to ask must not change the reason).
   */
  private async poll(probe: (timeoutMs: number) => Promise<unknown>, timeoutMs: number, what: string, when: string, step: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const tryMs = Math.min(5000, left);
      try {
        await probe(tryMs);
        return;
      } catch (err) {
        const cutShort = tryMs < 5000 && err instanceof VmHttpError && err.failure === 'timeout';
        if (!cutShort || last === undefined) last = err;
      }
      await sleep(Math.min(this.options.pollIntervalMs ?? 1000, Math.max(0, deadline - Date.now())));
    }
    const why = last instanceof Error ? `: last try: ${last.message}` : '';
    throw this.error(new Error(`${what} did not answer within ${timeoutMs / 1000} s ${when}${why}`), step);
  }

  private error(err: unknown, step: string, taskId = this.taskId): DesktopError {
    return new DesktopError(err instanceof Error ? err.message : String(err), this.id, taskId, step);
  }
}

/**
 * Whether a failure to read an app's state means the app is not running: its own server refuses the
 * connection, or the VM's server says it could not reach it (ChimeraX's REST server behind /chimerax/run).
 */
function appGone(err: unknown): boolean {
  if (!(err instanceof VmHttpError)) return false;
  if (err.code === 'ECONNREFUSED') return true;
  return err.failure === 'status' && err.status === 500 && /ConnectionError|Max retries exceeded/.test(err.message);
}

/** The base URL of a VM's app state server: the VM's own address, the configured port. */
export function appStateUrl(vm: OsworldVmConfig): string {
  const url = new URL(vm.url);
  return `${url.protocol}//${url.hostname}:${vm.appStatePort}`;
}

/** One desktop per VM of an osworld host, ids `<host>/<index>`. */
export function createOsworldDesktops(host: OsworldHostConfig, provider: VmProvider = new CommandVmProvider(host.resetTimeoutSeconds * 1000)): OsworldDesktop[] {
  return host.vms.map((_, i) => createOsworldDesktop(host, i, provider));
}

/** The desktop of the host's VM number `index`. */
export function createOsworldDesktop(
  host: OsworldHostConfig,
  index: number,
  provider: VmProvider = new CommandVmProvider(host.resetTimeoutSeconds * 1000),
): OsworldDesktop {
  const vm = host.vms[index];
  if (vm === undefined) throw new Error(`host ${host.id} has no VM ${index} (it has ${host.vms.length})`);
  return osworldDesktopOf(host, `${host.id}/${index}`, vm, provider);
}

/** How a host drives its VMs' servers and apps: the settings an osworld host and a qemu host share. */
export type VmPathSettings = Pick<OsworldHostConfig, 'appTimeoutSeconds' | 'readyTimeoutSeconds' | 'initializePauseSeconds' | 'initializeWaitScale' | 'downloads'>;

/** The desktop of one VM, reverted by `provider`, driven with the host's settings. */
export function osworldDesktopOf(host: VmPathSettings, id: string, vm: OsworldVmConfig, provider: VmProvider): OsworldDesktop {
  return new OsworldDesktop({
    id,
    vm,
    provider,
    client: createOsworldClient(vm.url),
    appState: createKalgebraState(appStateUrl(vm), { timeoutMs: host.appTimeoutSeconds * 1000 }),
    appTimeoutMs: host.appTimeoutSeconds * 1000,
    readyTimeoutMs: host.readyTimeoutSeconds * 1000,
    stepPauseMs: host.initializePauseSeconds * 1000,
    waitScale: host.initializeWaitScale,
    fetchUrl: fetchOnHost(host.downloads),
  });
}
