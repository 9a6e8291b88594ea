import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AtspiReader } from '../../../io/atspi';
import { describeExit, isAlive, ManagedProcess, MARKER_VAR, runCommand, waitFor, type Env, type ProcessSpec } from '../../../io/process';
import type { DesktopTools } from './tools';

export interface Screen {
  readonly width: number;
  readonly height: number;
}

export interface X11DisplayOptions {
  /** X display number: the server listens on :N. */
  readonly display: number;
  readonly screen: Screen;
  /** The desktop's own folder: the user's HOME, the runtime dir (sockets) and logs live here. */
  readonly dir: string;
  /** Put in the environment of every process as MARKER_VAR, so leftovers can be found by it. */
  readonly marker: string;
  readonly tools: DesktopTools;
}

const STARTUP_MS = 15_000;

/**
 * Every normal window maximized and undecorated, so an app always has the same layout; Alt+Tab
 * brings the window focused before to the front (no dialog), as the VMs' desktop does, so an
 * agent can go from one app of a cross-application task to the other.
 */
const OPENBOX_RC = `<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy><center>yes</center></placement>
  <desktops><number>1</number></desktops>
  <keyboard>
    <keybind key="A-Tab"><action name="NextWindow"><dialog>none</dialog><finalactions><action name="Focus"/><action name="Raise"/></finalactions></action></keybind>
  </keyboard>
  <mouse>
    <context name="Client">
      <mousebind button="Left" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Middle" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
      <mousebind button="Right" action="Press"><action name="Focus"/><action name="Raise"/></mousebind>
    </context>
  </mouse>
  <applications>
    <application class="*" type="normal">
      <maximized>yes</maximized>
      <decor>no</decor>
    </application>
  </applications>
</openbox_config>
`;

/** A session bus without service activation: nothing can start behind the desktop's back. */
const sessionBusConf = (address: string): string => `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>${address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`;

/**
 * One virtual screen with everything a Qt/KDE app needs to run and be read: Xvfb, a D-Bus
 * session bus, an accessibility (AT-SPI) bus with its registry, and openbox.
 *
 * Why the AT-SPI bus is wired by hand: Qt 5 connects to the accessibility bus asynchronously
 * when it finds it through the session bus, and then registers with the registry before that
 * connection is up (it logs "Error in contacting registry"), so the app is missing from the
 * tree. When the bus address is on the root window (AT_SPI_BUS), Qt connects synchronously and
 * registers every time. Readers get the address from AT_SPI_BUS_ADDRESS.
 *
 * The display's AT-SPI reader (io/atspi.ts) reads the apps' trees for their drivers: one python
 * process, started with the display and stopped with it, restarted by the next read if it died
 * or hung; it is not one of the processes whose death breaks the display.
 */
export class X11Display {
  readonly home: string;
  readonly runtimeDir: string;
  readonly logDir: string;
  private readonly sessionBus: string;
  private readonly a11yBus: string;
  private processes: ManagedProcess[] = [];
  /** Reads the apps' accessibility trees on this display's bus. */
  readonly atspi: AtspiReader;

  constructor(private readonly options: X11DisplayOptions) {
    this.home = path.join(options.dir, 'home');
    this.runtimeDir = path.join(options.dir, 'run');
    this.logDir = path.join(options.dir, 'logs');
    this.sessionBus = `unix:path=${path.join(this.runtimeDir, 'session-bus')}`;
    this.a11yBus = `unix:path=${path.join(this.runtimeDir, 'a11y-bus')}`;
    this.atspi = new AtspiReader({ python: options.tools.python, env: this.env() });
  }

  get name(): string {
    return `:${this.options.display}`;
  }

  get screen(): Screen {
    return this.options.screen;
  }

  /** The environment of every program that runs on this display; nothing leaks in from the worker's. */
  env(): Env {
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      HOME: this.home,
      USER: os.userInfo().username,
      DISPLAY: this.name,
      XDG_RUNTIME_DIR: this.runtimeDir,
      DBUS_SESSION_BUS_ADDRESS: this.sessionBus,
      AT_SPI_BUS_ADDRESS: this.a11yBus,
      [MARKER_VAR]: this.options.marker,
    };
  }

  /** Starts Xvfb, the buses, the AT-SPI registry and openbox, each checked before the next. */
  async start(): Promise<void> {
    this.checkDisplayFree();
    for (const dir of [this.home, this.logDir]) mkdirSync(dir, { recursive: true });
    mkdirSync(this.runtimeDir, { recursive: true, mode: 0o700 });
    const { tools, screen } = this.options;
    const env = this.env();
    const log = (name: string): string => path.join(this.logDir, `${name}.log`);

    const xvfb = this.spawn({
      name: `Xvfb ${this.name}`,
      command: tools.xvfb,
      args: [this.name, '-screen', '0', `${screen.width}x${screen.height}x24`, '-nolisten', 'tcp', '-noreset'],
      env,
      log: log('xvfb'),
    });
    await this.waitUntil(xvfb, async () => ((await this.succeeds(tools.xprop, ['-root', '-len', '0', '_XKB_RULES_NAMES'])) ? true : undefined), 'answer');

    const sessionConf = path.join(this.runtimeDir, 'session-bus.conf');
    writeFileSync(sessionConf, sessionBusConf(this.sessionBus));
    for (const [name, conf, address] of [
      ['session bus', sessionConf, this.sessionBus],
      ['accessibility bus', tools.atspiBusConfig, this.a11yBus],
    ] as const) {
      const socket = address.slice('unix:path='.length);
      // A socket left by a bus that was killed would make the wait below pass too early.
      rmSync(socket, { force: true });
      const bus = this.spawn({
        name,
        command: tools.dbusDaemon,
        args: [`--config-file=${conf}`, '--nofork', `--address=${address}`],
        env,
        log: log(name.replace(' ', '-')),
      });
      await this.waitUntil(bus, () => (existsSync(socket) ? true : undefined), `create ${socket}`);
    }

    const registry = this.spawn({ name: 'AT-SPI registry', command: tools.atspiRegistryd, args: [], env, log: log('atspi-registry') });
    const owned = ['--bus=' + this.a11yBus, '--print-reply', '--dest=org.freedesktop.DBus', '/', 'org.freedesktop.DBus.NameHasOwner', 'string:org.a11y.atspi.Registry'];
    await this.waitUntil(registry, async () => {
      const reply = await runCommand(tools.dbusSend, owned, { env, timeoutMs: 2_000 }).catch(() => Buffer.from(''));
      return reply.toString().includes('boolean true') ? true : undefined;
    }, 'own org.a11y.atspi.Registry');
    await runCommand(tools.xprop, ['-root', '-f', 'AT_SPI_BUS', '8s', '-set', 'AT_SPI_BUS', this.a11yBus], { env, timeoutMs: 5_000 });
    // Python imports pyatspi while the window manager and the app start.
    this.atspi.start();

    const rc = path.join(this.runtimeDir, 'openbox-rc.xml');
    writeFileSync(rc, OPENBOX_RC);
    const openbox = this.spawn({ name: 'openbox', command: tools.openbox, args: ['--config-file', rc], env, log: log('openbox') });
    await this.waitUntil(openbox, async () => {
      const out = await runCommand(tools.xprop, ['-root', '_NET_SUPPORTING_WM_CHECK'], { env, timeoutMs: 2_000 }).catch(() => Buffer.from(''));
      return out.toString().includes('window id') ? true : undefined;
    }, 'manage the screen');
  }

  /** Undefined while every process of the display runs; else which one is gone, and how. */
  problem(): string | undefined {
    if (this.processes.length === 0) return `display ${this.name} is not started`;
    for (const p of this.processes) {
      const problem = p.problem();
      if (problem !== undefined) return `${p.spec.name} (pid ${p.pid}) ${problem}`;
    }
    return undefined;
  }

  /** Stops every process, newest first (the window manager before the server it draws on). */
  async stop(): Promise<void> {
    await this.atspi.close();
    const running = [...this.processes].reverse();
    this.processes = [];
    for (const p of running) await p.stop();
  }

  private spawn(spec: ProcessSpec): ManagedProcess {
    const started = ManagedProcess.start(spec);
    this.processes.push(started);
    return started;
  }

  /** Waits until `probe` succeeds; fails early, with the log's tail, when the process exits. */
  private async waitUntil(p: ManagedProcess, probe: () => Promise<true | undefined> | true | undefined, what: string): Promise<void> {
    await waitFor(
      async () => {
        if (p.exit !== undefined) throw new Error(`${p.spec.name} ${describeExit(p.exit)} while starting: ${tail(p.spec.log)}`);
        return probe();
      },
      STARTUP_MS,
      () => `${p.spec.name} did not ${what} within ${STARTUP_MS / 1000} s: ${tail(p.spec.log)}`,
      50,
    );
  }

  private async succeeds(command: string, args: readonly string[]): Promise<boolean> {
    return runCommand(command, args, { env: this.env(), timeoutMs: 2_000 }).then(
      () => true,
      () => false,
    );
  }

  /**
   * Refuses a display another program holds (its lock names a live process). A lock left by a
   * dead server is removed with its socket, as the X server itself would.
   */
  private checkDisplayFree(): void {
    const n = this.options.display;
    const lock = `/tmp/.X${n}-lock`;
    if (!existsSync(lock)) return;
    const pid = Number(readFileSync(lock, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      } catch {
        /* it just exited */
      }
      throw new Error(`display :${n} is in use by pid ${pid} (${command || 'unknown'}); choose another displayBase`);
    }
    rmSync(lock, { force: true });
    rmSync(`/tmp/.X11-unix/X${n}`, { force: true });
  }
}

function tail(file: string): string {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return text === '' ? '(log empty)' : text.split('\n').slice(-5).join(' | ');
  } catch {
    return '(no log)';
  }
}
