import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ModelGateway } from '../activities/models/gateway';
import { ImagePreparer, readOnlyImages } from '../activities/models/images';
import { loadConfig } from '../config/load';
import { buildPlannerMessages } from '../core/prompts/planner';
import { freePort, REPO_CONFIG } from '../infra/ephemeral';
import { tinyQwen } from '../infra/small-planner/artifacts';
import { newPlannerKey, PLANNER_KEY_ENV, PYTHON } from '../infra/small-planner/runs';
import { mean, printTable } from './stats';

/**
 * The real planner server on this CPU: LLaMA-Factory's API server started by the project's restart
 * command (infra/serving/llamafactory_api.py) on the tiny Qwen2.5-VL (infra/trainers/tiny_qwen2_5_vl.py, from the artifact cache),
 * then `--requests` planner prompts of step 2 (two KAlgebra screenshots, bench/fixtures) through the
 * production gateway, one at a time, each asking `--tokens` new tokens at temperature 1, for each
 * planner box. It measures the server's start and its serving on CPU (image processing, template,
 * generation loop), not how fast a real planner's weights run: the model has 91k parameters.
 *
 *   node build/bench/planner-server.js [--requests 5] [--tokens 64] [--boxes 320x180,1280x720]
 */

const ROOT = path.resolve(__dirname, '..', '..');

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: 'string', default: '5' }, tokens: { type: 'string', default: '64' }, boxes: { type: 'string', default: '320x180,1280x720' } } });
  const scratch = mkdtempSync(path.join(tmpdir(), 'coda-planner-server-'));
  const stateDir = path.join(scratch, 'server');
  try {
    const { dir: model } = await tinyQwen();
    const port = await freePort();
    const base = loadConfig(REPO_CONFIG);
    // The server demands a key, in the variable the planner's apiKeyEnv names.
    const keyEnv = base.models.planner.apiKeyEnv ?? PLANNER_KEY_ENV;
    const env = { [keyEnv]: newPlannerKey() };
    const began = Date.now();
    execFileSync(PYTHON, [path.join(ROOT, 'infra', 'serving', 'llamafactory_api.py'), 'start', '--model', model, '--name', 'tiny', '--port', String(port), '--state-dir', stateDir, '--api-key-env', keyEnv], { stdio: 'pipe', env: { ...process.env, ...env } });
    const startSeconds = (Date.now() - began) / 1000;
    const screenshot = readFileSync(path.join(ROOT, 'bench', 'fixtures', 'kalgebra-1920x1080.png'));
    const messages = buildPlannerMessages({ instruction: 'Plot y = x^2.', software: 'KAlgebra', screenshotKey: 'now', history: [{ thought: 'Open the 2D Plot tab.', actionText: 'Click the 2D Plot tab', screenshotKey: 'before' }] });
    const rows: string[][] = [['box', 'prompt tokens', 'new tokens', 'seconds a request', 'new tokens/s']];
    for (const box of values.boxes.split(',').map((b) => b.split('x').map(Number) as [number, number])) {
      const planner = { ...base.models.planner, apiKeyEnv: keyEnv, baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tiny', image: { width: box[0], height: box[1] } };
      const gateway = new ModelGateway({ models: { ...base.models, planner }, images: readOnlyImages(async () => screenshot), env, preparer: new ImagePreparer([]) });
      // The first request of a box pays one-off costs (the image processor's first call, the first resize).
      await gateway.complete('planner', messages, { temperature: 1, maxTokens: 1 });
      const runs = [];
      for (let i = 0; i < Number(values.requests); i++) runs.push(await gateway.complete('planner', messages, { temperature: 1, maxTokens: Number(values.tokens) }));
      const seconds = runs.map((r) => r.latencyMs / 1000);
      const tokens = runs.map((r) => r.usage.completionTokens);
      rows.push([`${box[0]}x${box[1]}`, String(runs[0]!.usage.promptTokens), mean(tokens).toFixed(0), mean(seconds).toFixed(2), (tokens.reduce((a, b) => a + b, 0) / seconds.reduce((a, b) => a + b, 0)).toFixed(1)]);
    }
    printTable(`LLaMA-Factory 0.9.5 API server (HF backend, CPU) on the tiny Qwen2.5-VL: started in ${startSeconds.toFixed(1)} s; ${values.requests} step-2 planner prompts a box, one at a time`, rows);
  } finally {
    execFileSync(PYTHON, [path.join(ROOT, 'infra', 'serving', 'llamafactory_api.py'), 'stop', '--state-dir', stateDir], { stdio: 'pipe' });
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
