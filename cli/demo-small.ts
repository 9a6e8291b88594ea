import type { LoadedConfig } from '../config/load';
import type { Size } from '../core/images';
import {
  checkTrainers,
  ensureModel,
  ensureStart,
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
 * progress line and its time; what a previous run of the same seed built is reused. Returns the
 * deployment the stack then runs on, and `env` with the key, which the stack's workers are given.
 */
export async function prepareSmallPlanner(config: LoadedConfig, env: Record<string, string>): Promise<{ deployment: LoadedConfig; env: Record<string, string> }> {
  checkTrainers();
  const seed = config.dev.scriptedModels?.seed ?? 1;
  const places = smallPlannerPlaces(config, seed, env);
  const screen = localScreen(config);
  await step('small-planner model', `small planner: building the Qwen2.5-VL from seed ${seed}`, async () => {
    const parameters = ensureModel(places, screen, seed);
    return parameters === undefined ? `small planner: built already (${places.model})` : `small planner: ${parameters.toLocaleString('en')} parameters, seed ${seed} (${places.model})`;
  });
  await step('small-planner start', `starting SFT: ${SMALL_START_EPOCHS} epochs of the real LLaMA-Factory on the local KAlgebra tasks' reference rows`, async () => {
    const steps = await ensureStart(config, places, screen, seed);
    return steps === undefined ? `starting SFT: trained already (${places.start})` : `starting SFT: ${steps} steps by the real LLaMA-Factory (${places.start})`;
  });
  const deployment = writeDeployment(config, places, seed, env);
  console.log(`  the deployment: ${places.configFile} (CODA_CONFIG for coda commands on this run)`);
  const keyed = withPlannerKey(deployment, env);
  await step('small-planner server', `the real LLaMA-Factory API server: starting on the start, port ${places.port}`, async () => {
    serveStart(deployment, places, seed, keyed);
    return `the real LLaMA-Factory API server serves ${SMALL_PLANNER_NAME} on port ${places.port} (log ${places.stateDir}/server.log)`;
  });
  return { deployment, env: keyed };
}

/** Runs `work` under a progress line showing `doing`; ends the line with what `work` returns and records its time. */
async function step(name: string, doing: string, work: () => Promise<string>): Promise<void> {
  const line = new ProgressLine();
  line.update(doing);
  line.end(`✓ ${await work()}`);
  recordStageTime('demo', name, line.elapsedSeconds());
}

/** The screen of the local host's desktops: the size the reference rows' actions are written for. */
function localScreen(config: LoadedConfig): Size {
  const host = config.hosts.find((h) => h.kind === 'local');
  if (host === undefined || host.kind !== 'local') throw new Error(`${config.file}: --planner small runs on a local host's desktops, and hosts has none`);
  return host.screen;
}
