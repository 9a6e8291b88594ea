import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { OsworldVmConfig } from '../../config/schema';
import { stopReasonOf } from '../../core/episode';
import type { EvaluationResult, StopInfo } from '../../core/evaluation';
import { parsePlannerOutput, primitiveAction } from '../../core/planner-parser';
import type { Task } from '../../core/task';
import { createOsworldClient } from '../../io/osworld-client';
import { appStateUrl, OsworldDesktop } from '../../activities/desktop/osworld/osworld-desktop';
import { CommandVmProvider } from '../../activities/desktop/osworld/vm-provider';
import { TaskLibrary } from '../../activities/tasks/library';
import { gcmdKey, type GrassState } from '../../apps/grassgis/double';
import { startKalgebraStateDouble, type KalgebraStateDouble } from '../../apps/kalgebra/double';
import { createKalgebraState } from '../../apps/kalgebra/vm';
import { desktopOn, startDoubledVm, type DoubledVm } from './scienceboard-vm';
import { startOsworldServerDouble, type OsworldServerDouble } from '../../doubles/osworld-server';

/**
 * ScienceBoard's scoring, table by table, written from its code (github.com/OS-Copilot/ScienceBoard
 * at 9896c9b: `sci/`, and `vm_config/server.py` for the VM's routes): for every check type and for
 * the five places where the project's evaluator used to differ, the app's state, the verdict
 * ScienceBoard's code gives (the `sci/` file and line each row follows), and the verdict of the
 * project's own evaluator — the project's task loader (TaskLibrary, parseTask) and the OSWorld
 * desktop's `evaluate`, against the app-server TEST DOUBLES; a stop from the planner's raw reply
 * read by the project's planner parser. The five cases: (1) KAlgebra plot points, (2) stop answers,
 * (3) GRASS GIS db checks whose module fails, (4) dumps with NaN or Infinity, (5) an app not running
 * at evaluation, where the project departs on purpose (docs/scoring.md): ScienceBoard skips the task,
 * the project counts it not solved, with its own outcome.
 */

/** What ScienceBoard's code concludes: a verdict, or no verdict (its tester skips the task). */
type ScienceBoardVerdict = boolean | 'skipped';

interface Row {
  /** The task, and what state or reply the row sets. */
  readonly name: string;
  /** The `sci/` code the verdict follows, file:line at 9896c9b. */
  readonly follows: string;
  /** Which of the issue's five cases, when the row is one. */
  readonly case?: 'plot points' | 'stop answers' | 'db module fails' | 'NaN dumps' | 'app not running';
  readonly scienceBoard: ScienceBoardVerdict;
  /** The project's verdict: ScienceBoard's, but for the app not running (not solved, its own outcome). */
  readonly project: { readonly passed: boolean; readonly appNotRunning?: string };
  run(env: Env): Promise<EvaluationResult>;
}

interface Env {
  readonly vm: DoubledVm;
  readonly vmDesktop: OsworldDesktop;
  readonly kalgebra: KalgebraStateDouble;
  /** An OSWorld VM double holding no ScienceBoard app but KAlgebra's state server (and TeXstudio's files in `dir`). */
  readonly desktop: OsworldDesktop;
  readonly dir: string;
  task(software: string, id: string): Task;
}

/** How the episode ended after the planner's raw reply, as the project's planner parser reads it. A reply that is no stop leaves the episode running: with nothing else done, its steps run out. */
function stopAfter(reply: string): StopInfo {
  const parsed = parsePlannerOutput(reply);
  const action = parsed.ok ? primitiveAction(parsed.action) : undefined;
  if (action === undefined) return { reason: 'TIMEOUT' };
  return action.type === 'answer' ? { reason: 'ANS', answer: action.text } : { reason: stopReasonOf(action)! };
}

/** A VM app's task evaluated after the agent left its test state (test/desktop/app-states), changed by `edit` when given. */
async function onVm(env: Env, software: string, id: string, variant: 'pass' | 'off', edit?: (vm: DoubledVm) => void): Promise<EvaluationResult> {
  const task = env.task(software, id);
  await env.vm.prepare(task, variant);
  await env.vmDesktop.reset(task);
  await env.vmDesktop.screenshot();
  edit?.(env.vm);
  return env.vmDesktop.evaluate(task, { reason: 'DONE' });
}

/** A KAlgebra task evaluated with `plots` plotted and `variables` defined in the app. */
async function onKalgebra(env: Env, id: string, plots: ReadonlyArray<readonly [2 | 3, string]>, variables: Record<string, string> = {}, stop: StopInfo = { reason: 'DONE' }): Promise<EvaluationResult> {
  env.kalgebra.plotted.length = 0;
  for (const name of Object.keys(env.kalgebra.variables)) delete env.kalgebra.variables[name];
  Object.assign(env.kalgebra.variables, variables);
  const state = createKalgebraState(env.kalgebra.url, { retries: 0 });
  for (const [dimensions, expr] of plots) await state.plot(dimensions, expr);
  return env.desktop.evaluate(env.task('KAlgebra', id), stop);
}

/** A TeXstudio task whose /home/user/atelier is the test's folder, with only the checks at `only`, its files as the task writes them, then as `edit` leaves them. */
async function onTex(env: Env, id: string, only: readonly number[], edit: (files: Map<string, string>) => void = () => undefined): Promise<EvaluationResult> {
  const moved = JSON.parse(JSON.stringify(env.task('TeXstudio', id)).replaceAll('/home/user/atelier', env.dir)) as Task;
  const files = new Map(moved.initialize.flatMap((s) => (s.func === 'touch' ? [[s.path, s.text] as const] : [])));
  edit(files);
  await rm(env.dir, { recursive: true, force: true });
  await mkdir(env.dir, { recursive: true });
  for (const [file, text] of files) await writeFile(file, text);
  return env.desktop.evaluate({ ...moved, evaluate: moved.evaluate.filter((_, i) => only.includes(i)) }, { reason: 'DONE' });
}

const C03_REPLY = (action: string): string => `Thought: The 24th Fibonacci number is shown in the calculator.\nAction: ${action}`;

/** What KAlgebra draws for the expressions the rows plot: residuals, 0 on the curve or surface. */
const CURVES = {
  'x->e^x-1': ([x = 0, y = 0]: readonly number[]) => y - (Math.exp(x) - 1),
  'q->6*sin(3*q)': ([x = 0, y = 0]: readonly number[]) => y - 6 * Math.sin(3 * x),
  'diff(ln(x^2+1)+x^2-x:x)': ([x = 0, y = 0]: readonly number[]) => y - ((2 * x) / (x * x + 1) + 2 * x - 1),
  'x+y/2+z/3=1': ([x = 0, y = 0, z = 0]: readonly number[]) => x + y / 2 + z / 3 - 1,
  'x^2+y^2+z^2+2x*z=1': ([x = 0, y = 0, z = 0]: readonly number[]) => x * x + y * y + z * z + 2 * x * z - 1,
};

const VIEW = '_state_containers.models._models.(1,)._atoms_drawing._draw_shape.bindings._opengl_context.window.view._render';
const D04_RUN = gcmdKey('v.to.db', { flags: 'p', map: 'countries@PERMANENT', type: 'point', option: 'coor' });
/** GRASS's /gcmd answer for D-04's module (the double's state; 'ERROR' is what the GUI answers when it times out). */
const setGcmd = (vm: DoubledVm, answer: unknown): void => {
  vm.grass.state = { ...vm.grass.state, gcmd: { [D04_RUN]: answer } as unknown as GrassState['gcmd'] };
};

const ROWS: readonly Row[] = [
  // info (Celestia, GRASS GIS): pred(key(dump), value)
  { name: 'Celestia B-09 info, its state', follows: 'sci/Celestia/task.py:40-51', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'Celestia', 'B-09', 'pass') },
  { name: 'Celestia B-09 info, time running', follows: 'sci/Celestia/task.py:49', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'Celestia', 'B-09', 'off') },
  { name: 'GRASS GIS A-08 info, its state', follows: 'sci/GrassGIS/task.py:51-60', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'GrassGIS', 'A-08', 'pass') },
  { name: 'GRASS GIS A-08 info, the region off', follows: 'sci/GrassGIS/task.py:60', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'GrassGIS', 'A-08', 'off') },
  // db (GRASS GIS): pred(key(stdout of /gcmd), value)
  { name: 'GRASS GIS D-04 db, the module\'s stdout', follows: 'sci/GrassGIS/task.py:62-74', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'GrassGIS', 'D-04', 'pass') },
  { name: 'GRASS GIS D-04 db, a coordinate off', follows: 'sci/GrassGIS/task.py:74', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'GrassGIS', 'D-04', 'off') },
  // states, info, file (ChimeraX)
  { name: 'ChimeraX A-08 states, its state', follows: 'sci/ChimeraX/task.py:105-118', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'ChimeraX', 'A-08', 'pass') },
  { name: 'ChimeraX A-08 states, a depth off', follows: 'sci/ChimeraX/task.py:118', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'ChimeraX', 'A-08', 'off') },
  { name: 'ChimeraX A-05 info, the logged lines as a set', follows: 'sci/ChimeraX/task.py:129-135', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'ChimeraX', 'A-05', 'pass') },
  { name: 'ChimeraX A-05 info, a line off', follows: 'sci/ChimeraX/task.py:135', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'ChimeraX', 'A-05', 'off') },
  { name: 'ChimeraX D-03 file, the prediction written', follows: 'sci/ChimeraX/task.py:143-149', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'ChimeraX', 'D-03', 'pass') },
  { name: 'ChimeraX D-03 file, a residue off', follows: 'sci/ChimeraX/task.py:149', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'ChimeraX', 'D-03', 'off') },
  // placeholder (Lean): /lean/check
  { name: 'Lean A-05 placeholder, the proof built', follows: 'sci/Lean/task.py:174-181, vm_config/server.py:1214-1226', scienceBoard: true, project: { passed: true }, run: (e) => onVm(e, 'Lean', 'A-05', 'pass') },
  {
    name: 'Lean A-05 placeholder, still sorry',
    follows: 'sci/Lean/task.py:174-181, vm_config/server.py:1222',
    scienceBoard: false,
    project: { passed: false },
    run: async (e) => {
      const task = e.task('Lean', 'A-05');
      await e.vmDesktop.reset(task);
      return e.vmDesktop.evaluate(task, { reason: 'DONE' });
    },
  },
  // var, val, eqn (KAlgebra)
  { name: 'KAlgebra A-01 var, p prints 1+-i', follows: 'sci/KAlgebra/task.py:68-72', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'A-01', [], { p: '1+-i' }) },
  { name: 'KAlgebra A-01 var, p prints 1-i', follows: 'sci/KAlgebra/task.py:72', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'A-01', [], { p: '1-i' }) },
  { name: 'KAlgebra C-01 val, within 1e-6', follows: 'sci/KAlgebra/task.py:50-61', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'C-01', [], { p: String(Math.log2(3) + 5e-7) }) },
  { name: 'KAlgebra C-01 val, 2e-6 off', follows: 'sci/KAlgebra/task.py:51', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'C-01', [], { p: String(Math.log2(3) + 2e-6) }) },
  { name: 'KAlgebra B-04 eqn, e^x-1 plotted', follows: 'sci/KAlgebra/task.py:83-87', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'B-04', [[2, 'x->e^x-1']]) },
  { name: 'KAlgebra B-04 eqn, only the polar curve plotted', follows: 'sci/KAlgebra/task.py:84-87', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'B-04', [[2, 'q->6*sin(3*q)']]) },
  { name: 'KAlgebra B-03 eqn #SIZE, the function removed', follows: 'sci/KAlgebra/task.py:79-81', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'B-03', []) },
  { name: 'KAlgebra B-03 eqn #SIZE, still plotted', follows: 'sci/KAlgebra/task.py:81', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'B-03', [[2, 'q->6*sin(3*q)']]) },
  // file, include, compile (TeXstudio)
  {
    name: 'TeXstudio B-01 file, the citation filled in',
    follows: 'sci/TeXstudio/task.py:41-45',
    scienceBoard: true,
    project: { passed: true },
    run: (e) => onTex(e, 'B-01', [0], (files) => files.forEach((text, file) => file.endsWith('main.tex') && files.set(file, text.replaceAll('\\cite{}', '\\cite{de2015lean}')))),
  },
  { name: 'TeXstudio B-01 file, untouched', follows: 'sci/TeXstudio/task.py:45', scienceBoard: false, project: { passed: false }, run: (e) => onTex(e, 'B-01', [0]) },
  {
    name: 'TeXstudio B-04 include, the entry added',
    follows: 'sci/TeXstudio/task.py:52-53',
    scienceBoard: true,
    project: { passed: true },
    run: (e) =>
      onTex(e, 'B-04', [0, 1, 2, 3, 4], (files) =>
        files.forEach((text, file) => file.endsWith('refs.bib') && files.set(file, `${text}\n@article{avagyan2018new,\n  title={A New Method in the Problem of Three Cubes},\n  author={Avagyan, Armen and Dallakyan, Gurgen},\n  journal={arXiv preprint arXiv:1802.06776},\n  year={2018}\n}\n`)),
      ),
  },
  { name: 'TeXstudio B-04 include, untouched', follows: 'sci/TeXstudio/task.py:53', scienceBoard: false, project: { passed: false }, run: (e) => onTex(e, 'B-04', [0, 1, 2, 3, 4]) },
  { name: 'TeXstudio C-02 compile, pdflatex exits 0', follows: 'sci/TeXstudio/task.py:115-126, vm_config/server.py:1239-1245', scienceBoard: true, project: { passed: true }, run: (e) => onTex(e, 'C-02', [1]) },
  { name: 'TeXstudio C-06 compile, pdflatex fails', follows: 'sci/TeXstudio/task.py:126, vm_config/server.py:1239-1240', scienceBoard: false, project: { passed: false }, run: (e) => onTex(e, 'C-06', [0]) },
  // stop, from the planner's raw reply
  { name: 'KAlgebra C-03 stop, "Action: ANS 46368"', follows: 'sci/base/prompt.py:255-262, sci/base/task.py:362-363', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'C-03', [], {}, stopAfter(C03_REPLY('ANS 46368'))) },
  { name: 'KAlgebra C-03 stop, a fenced ANS 46368 on its own line', follows: 'sci/base/prompt.py:143,165', scienceBoard: true, project: { passed: true }, run: (e) => onKalgebra(e, 'C-03', [], {}, stopAfter(C03_REPLY('```\nANS 46368\n```'))) },
  { name: 'KAlgebra C-03 stop, DONE where ANS is asked', follows: 'sci/base/task.py:359-361', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'C-03', [], {}, stopAfter(C03_REPLY('DONE'))) },
  { name: 'GRASS GIS C-03 stop, "ANS Vigili del Fuoco"', follows: 'sci/base/prompt.py:255, sci/base/task.py:362-363', scienceBoard: true, project: { passed: true }, run: (e) => e.vmDesktop.evaluate(e.task('GrassGIS', 'C-03'), stopAfter('Thought: The layer is named.\nAction: ANS Vigili del Fuoco')) },
  { name: 'Celestia C-06 stop, "ANS TYC 2082-2143-1"', follows: 'sci/base/prompt.py:255, sci/base/task.py:362-363', scienceBoard: true, project: { passed: true }, run: (e) => e.vmDesktop.evaluate(e.task('Celestia', 'C-06'), stopAfter('Thought: The star is selected.\nAction: ANS TYC 2082-2143-1')) },

  // (1) KAlgebra plot points: sent as the task file spells them, named so by the server.
  ...(['C-07', 'C-15', 'C-17'] as const).map((id): Row => ({
    name: `KAlgebra ${id} eqn, its reference answer plotted`,
    follows: 'sci/KAlgebra/kalgebra.py:43, sci/KAlgebra/task.py:83-87',
    case: 'plot points',
    scienceBoard: true,
    project: { passed: true },
    run: (e) => onKalgebra(e, id, [id === 'C-07' ? [2, 'diff(ln(x^2+1)+x^2-x:x)'] : [3, id === 'C-15' ? 'x+y/2+z/3=1' : 'x^2+y^2+z^2+2x*z=1']]),
  })),
  // (2) stop answers: split on single spaces and compared list for list, nothing trimmed or unquoted.
  ...[
    ['ANS "46368"', 'sci/base/prompt.py:255, sci/base/task.py:362-363'],
    ['ANS `46368`', 'sci/base/prompt.py:255, sci/base/task.py:362-363'],
    ['ANS  46368', 'sci/base/prompt.py:255, sci/base/task.py:362-363'],
    ['```ANS 46368```', 'sci/base/prompt.py:165 (ANS taken for a language tag), 124, 169-170'],
  ].map(([action, follows]): Row => ({ name: `KAlgebra C-03 stop, "Action: ${action}"`, follows: follows!, case: 'stop answers', scienceBoard: false, project: { passed: false }, run: (e) => onKalgebra(e, 'C-03', [], {}, stopAfter(C03_REPLY(action!))) })),
  { name: 'GRASS GIS C-03 stop, "ANS Vigili  del Fuoco"', follows: 'sci/base/prompt.py:255, sci/base/task.py:362-363', case: 'stop answers', scienceBoard: false, project: { passed: false }, run: (e) => e.vmDesktop.evaluate(e.task('GrassGIS', 'C-03'), stopAfter('Thought: The layer is named.\nAction: ANS Vigili  del Fuoco')) },
  { name: 'Celestia C-06 stop, "ANS TYC  2082-2143-1"', follows: 'sci/base/prompt.py:255, sci/base/task.py:362-363', case: 'stop answers', scienceBoard: false, project: { passed: false }, run: (e) => e.vmDesktop.evaluate(e.task('Celestia', 'C-06'), stopAfter('Thought: The star is selected.\nAction: ANS TYC  2082-2143-1')) },
  // (3) GRASS GIS db checks whose module does not run: .json() raises, the task fails.
  { name: 'GRASS GIS D-04 db, /gcmd answers ERROR (the GUI timed out)', follows: 'sci/GrassGIS/grass.py:54-58, sci/GrassGIS/task.py:63,76', case: 'db module fails', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'GrassGIS', 'D-04', 'pass', (vm) => setGcmd(vm, 'ERROR')) },
  { name: 'GRASS GIS D-04 db, /gcmd answers 500 (the module failed)', follows: 'sci/GrassGIS/grass.py:54-58, sci/GrassGIS/task.py:63,76', case: 'db module fails', scienceBoard: false, project: { passed: false }, run: (e) => onVm(e, 'GrassGIS', 'D-04', 'pass', (vm) => setGcmd(vm, { stdout: '', stderr: 'ERROR: Vector map <countries@PERMANENT> not found', returncode: 1 })) },
  // (4) ChimeraX's dump with NaN and Infinity, as Python's json.dump writes them: json.loads reads it, the checks run.
  {
    name: 'ChimeraX A-08 states, the dump holds NaN and Infinity elsewhere',
    follows: 'sci/ChimeraX/chimerax.py:216-222, sci/ChimeraX/task.py:108,118',
    case: 'NaN dumps',
    scienceBoard: true,
    project: { passed: true },
    run: (e) => onVm(e, 'ChimeraX', 'A-08', 'pass', (vm) => Object.assign(vm.chimerax.state.states, { [`${VIEW}.camera.near_clip`]: Number.NaN, [`${VIEW}.camera.far_clip`]: Number.POSITIVE_INFINITY, [`${VIEW}.camera.min`]: Number.NEGATIVE_INFINITY })),
  },
  {
    name: 'ChimeraX A-08 states, the value checked is NaN',
    follows: 'sci/ChimeraX/chimerax.py:222, sci/ChimeraX/task.py:118 (nan == 1.45 is False)',
    case: 'NaN dumps',
    scienceBoard: false,
    project: { passed: false },
    run: (e) => onVm(e, 'ChimeraX', 'A-08', 'pass', (vm) => Object.assign(vm.chimerax.state.states, { [`${VIEW}.lighting.ambient_light_intensity`]: Number.NaN })),
  },
  // (5) ChimeraX closed before the evaluation: ScienceBoard's states_dump raises and its tester skips the task; the project fails it, with its own outcome.
  ...(['A-08', 'A-05', 'D-03'] as const).map((id): Row => ({
    name: `ChimeraX ${id}, ChimeraX closed by the agent`,
    follows: 'sci/ChimeraX/task.py:155, sci/ChimeraX/chimerax.py:221, sci/Tester.py:417-419',
    case: 'app not running',
    scienceBoard: 'skipped',
    project: { passed: false, appNotRunning: 'ChimeraX' },
    run: (e) => onVm(e, 'ChimeraX', id, 'pass', (vm) => vm.chimerax.quit()),
  })),
];

describe("ScienceBoard's scoring, table-driven, through the project's evaluator (app-server doubles)", function () {
  this.timeout(120_000);
  let env: Env;
  let server: OsworldServerDouble;

  before(async () => {
    const vm = await startDoubledVm();
    const kalgebra = await startKalgebraStateDouble({ curves: CURVES });
    server = await startOsworldServerDouble();
    const config: OsworldVmConfig = { url: server.url, resetCommand: ['true'], screen: { width: 1280, height: 800 }, appStatePort: kalgebra.port };
    const desktop = new OsworldDesktop({
      id: 'score-1/0',
      vm: config,
      provider: new CommandVmProvider(5000),
      client: createOsworldClient(config.url, { retries: 0 }),
      appState: createKalgebraState(appStateUrl(config), { retries: 0 }),
      readyTimeoutMs: 3000,
    });
    const library = new TaskLibrary();
    const tasks = new Map(['Celestia', 'ChimeraX', 'GrassGIS', 'KAlgebra', 'Lean', 'TeXstudio'].flatMap((software) => library.load(software).map((t) => [`${software}/${t.id}`, t] as const)));
    const dir = path.join(await mkdtemp(path.join(tmpdir(), 'coda-scoring-')), 'atelier');
    env = {
      vm,
      vmDesktop: desktopOn(vm),
      kalgebra,
      desktop,
      dir,
      task: (software, id) => tasks.get(`${software}/${id}`) ?? assert.fail(`no ${software} task ${id}`),
    };
  });

  after(async () => {
    await env?.vm.close();
    await env?.kalgebra.close();
    await server?.close();
    if (env !== undefined) await rm(path.dirname(env.dir), { recursive: true, force: true });
  });

  it('has rows for every check type and each of the five cases', () => {
    const types = new Set(ROWS.flatMap((row) => /\b(info|states|file|include|compile|db|val|var|eqn|placeholder|stop)\b/.exec(row.name)?.[1] ?? []));
    assert.deepEqual([...types].sort(), ['compile', 'db', 'eqn', 'file', 'include', 'info', 'placeholder', 'states', 'stop', 'val', 'var']);
    assert.deepEqual([...new Set(ROWS.flatMap((row) => row.case ?? []))].sort(), ['NaN dumps', 'app not running', 'db module fails', 'plot points', 'stop answers']);
    for (const row of ROWS) assert.equal(row.project.passed, row.scienceBoard === true, `${row.name}: the project passes exactly what ScienceBoard passes`);
  });

  for (const row of ROWS) {
    it(`${row.case === undefined ? '' : `(${row.case}) `}${row.name}: ScienceBoard ${row.scienceBoard === 'skipped' ? 'skips the task' : row.scienceBoard ? 'passes' : 'fails'} (${row.follows})`, async () => {
      const result = await row.run(env);
      const notRunning = (result as { appNotRunning?: string }).appNotRunning;
      assert.deepEqual({ passed: result.passed, ...(notRunning === undefined ? {} : { appNotRunning: notRunning }) }, row.project, JSON.stringify(result.checks));
    });
  }
});
