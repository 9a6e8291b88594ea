import { loadConfig, type LoadedConfig } from '../../config/load';
import { TaskLibrary } from '../../activities/tasks/library';
import { startScriptedServer, type ScriptedServer } from '../openai-server';
import { scriptedAgentPolicy } from './agent-policy';

/**
 * TEST DOUBLE entry point: the scripted model server for the dev stack and the tests, configured
 * by temporal.yaml's `dev.scriptedModels` (port, error rates) and `models` (which names it serves).
 */
export async function startScriptedModels(config: LoadedConfig, port?: number, library = new TaskLibrary()): Promise<ScriptedServer> {
  const settings = config.dev.scriptedModels;
  if (settings === undefined) throw new Error(`${config.file}: dev.scriptedModels is not set, so there is no scripted model server to start`);
  const host = config.hosts.find((h) => h.kind === 'local');
  const screen = host?.kind === 'local' ? host.screen : { width: 1920, height: 1080 };
  const tasks = library.software().flatMap((software) => library.load(software));
  const policy = scriptedAgentPolicy({
    tasks,
    screen,
    plannerModel: config.models.planner.model,
    executorModel: config.models.executor.model,
    errorRate: settings.errorRate,
    malformedRate: settings.malformedRate,
    seed: settings.seed,
  });
  return startScriptedServer(policy, { port: port ?? settings.port, models: [config.models.planner.model, config.models.executor.model] });
}

if (require.main === module) {
  startScriptedModels(loadConfig())
    .then((server) => console.log(`scripted model server (test double) on ${server.url}`))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
