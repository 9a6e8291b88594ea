import type { LoadedConfig } from '../config/load';
import type { Size } from '../core/images';
import {
  checkTrainers,
  demoModel,
  demoStart,
  serveStart,
  SMALL_PLANNER_NAME,
  SMALL_START_EPOCHS,
  smallPlannerPlaces,
  withPlannerKey,
  writeDeployment,
} from '../infra/small-planner/demo';
import { ProgressLine } from './progress-line';
import { recordStageTime } from './stage-times';

/**
 * The demo's steps before the stack when it runs the real small planner (`--planner small`): the
 * model built from the run seed, its starting SFT, the deployment written (infra/small-planner/demo.ts),
 * and the real server started on the start, demanding a key made for this start. Each shows a
 * progress line and its time; what a previous run built for the same inputs is taken from the
 * artifact cache. Returns the deployment the stack then runs on, and `env` with the key, which the
 * stack's workers are given.
 */
export async function prepareSmallPlanner(config: LoadedConfig, env: Record<string, string>): Promise<{ deployment: LoadedConfig; env: Record<string, string> }> {
  checkTrainers();
  const seed = config.dev.scriptedModels?.seed ?? 1;
  const places = smallPlannerPlaces(config, env);
  const screen = localScreen(config);
  const model = await step('small-planner model', `small planner: building the Qwen2.5-VL from seed ${seed}`, async () => {
    const built = await demoModel(screen, seed);
    return [built, `small planner: ${built.parameters.toLocaleString('en')} parameters, seed ${seed}, ${built.built ? 'built' : 'from the artifact cache'} (${built.dir})`];
  });
  const start = await step('small-planner start', `starting SFT: ${SMALL_START_EPOCHS} epochs of the real LLaMA-Factory on the local KAlgebra tasks' reference rows`, async () => {
    const trained = await demoStart(config, model, screen, seed);
    return [trained, `starting SFT: ${trained.steps} steps by the real LLaMA-Factory, ${trained.built ? 'trained' : 'from the artifact cache'} (${trained.dir})`];
  });
  const deployment = writeDeployment(config, places, start.dir, seed, env);
  console.log(`  the deployment: ${places.configFile} (CODA_CONFIG for coda commands on this run)`);
  const keyed = withPlannerKey(deployment, env);
  await step('small-planner server', `the real LLaMA-Factory API server: starting on the start, port ${places.port}`, async () => {
    serveStart(deployment, places, start.dir, seed, keyed);
    return [undefined, `the real LLaMA-Factory API server serves ${SMALL_PLANNER_NAME} on port ${places.port} (log ${places.stateDir}/server.log)`];
  });
  return { deployment, env: keyed };
}

/** Runs `work` under a progress line showing `doing`; ends the line with what `work` says, records its time and returns what it made. */
async function step<T>(name: string, doing: string, work: () => Promise<[T, string]>): Promise<T> {
  const line = new ProgressLine();
  line.update(doing);
  const [made, said] = await work();
  line.end(`✓ ${said}`);
  recordStageTime('demo', name, line.elapsedSeconds());
  return made;
}

/** The screen of the local host's desktops: the size the reference rows' actions are written for. */
function localScreen(config: LoadedConfig): Size {
  const host = config.hosts.find((h) => h.kind === 'local');
  if (host === undefined || host.kind !== 'local') throw new Error(`${config.file}: --planner small runs on a local host's desktops, and hosts has none`);
  return host.screen;
}
