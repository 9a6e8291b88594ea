import { readOnlyImages } from '../../../activities/models/images';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../../config/load';
import { image, text } from '../../../core/prompts/messages';
import { ModelGateway, ModelRequestError, ModelUnavailableError } from '../../../activities/models/gateway';
import { startScriptedServer, type ChatRequest, type Reply, type ScriptedServer } from '../../../doubles/openai-server';
import { REPO_CONFIG } from '../../../infra/ephemeral';

const SCREENSHOT = readFileSync(path.join(path.dirname(REPO_CONFIG), 'bench', 'fixtures', 'kalgebra-1920x1080.png'));

/** Width and height of every image part a request carried. */
function imageSizes(request: ChatRequest): Array<[number, number]> {
  return request.messages.flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content
          .filter((p) => p.type === 'image_url')
          .map((p) => {
            const png = Buffer.from(String((p.image_url as { url: string }).url).split(',')[1] ?? '', 'base64');
            return [png.readUInt32BE(16), png.readUInt32BE(20)] as [number, number];
          }),
  );
}

describe('model gateway (the production OpenAI client against the scripted test double over HTTP)', () => {
  let server: ScriptedServer;
  let script: (request: ChatRequest) => Reply;
  const seen: ChatRequest[] = [];

  before(async () => {
    server = await startScriptedServer((request) => {
      seen.push(request);
      return script(request);
    });
  });
  after(async () => server.close());

  const gateway = (edit: (models: any) => void = () => undefined) => {
    const env = { CODA_PLANNER_URL: server.url, CODA_EXECUTOR_URL: server.url, CODA_PLANNER_API_KEY: 'k', CODA_EXECUTOR_API_KEY: 'k' };
    const config = loadConfig(REPO_CONFIG, env);
    const models = structuredClone(config.models);
    models.planner.maxRetries = 2;
    edit(models);
    return new ModelGateway({ models, images: readOnlyImages(async () => SCREENSHOT), env });
  };

  it('sends screenshots at the role’s resolution, asks for n samples and records usage and latency', async () => {
    seen.length = 0;
    script = (request) => ({ texts: Array.from({ length: request.n }, (_, i) => `sample ${i}`) });
    const result = await gateway().complete('planner', [{ role: 'user', content: [text('What now?'), image('shot-1')] }], { n: 8, temperature: 1 });
    assert.deepEqual(result.texts, Array.from({ length: 8 }, (_, i) => `sample ${i}`));
    assert.deepEqual(imageSizes(seen[0]!), [[1280, 720]], 'the planner sees 1280x720 (temporal.yaml models.planner.image)');
    assert.deepEqual(result.imageSize, { width: 1280, height: 720 });
    assert.equal(seen[0]!.n, 8);
    assert.equal(seen[0]!.temperature, 1);
    assert.ok(result.usage.promptTokens > 1000 && result.usage.completionTokens > 0);
    assert.ok(result.latencyMs >= 0);

    seen.length = 0;
    const executor = await gateway().complete('executor', [{ role: 'user', content: [image('shot-1')] }]);
    assert.deepEqual(imageSizes(seen[0]!), [[1920, 1080]], 'the executor sees the native screen');
    assert.deepEqual(executor.imageSize, { width: 1920, height: 1080 });
  });

  it("asks for the endpoint's maxTokens (1024 unless set) unless the call sets its own", async () => {
    script = () => ({ texts: ['ok'] });
    const asked = async (edit: (models: any) => void, maxTokens?: number): Promise<number | undefined> => {
      seen.length = 0;
      await gateway(edit).complete('planner', [{ role: 'user', content: [text('What now?')] }], maxTokens === undefined ? {} : { maxTokens });
      return seen[0]!.maxTokens;
    };
    assert.equal(await asked(() => undefined), 1024);
    assert.equal(await asked((models) => (models.planner.maxTokens = 128)), 128);
    assert.equal(await asked((models) => (models.planner.maxTokens = 128), 16), 16);
  });

  it('retries rate limits and server errors with backoff, then succeeds', async () => {
    let calls = 0;
    script = () => (++calls <= 2 ? { status: calls === 1 ? 429 : 503, message: 'busy' } : { texts: ['ok'] });
    const result = await gateway().complete('planner', [{ role: 'user', content: 'hi' }]);
    assert.deepEqual(result.texts, ['ok']);
    assert.equal(calls, 3);
  });

  it('gives up after its retries with a retryable error naming the role, model and endpoint', async () => {
    let calls = 0;
    script = () => (calls++, { status: 500, message: 'broken' });
    await assert.rejects(gateway().complete('planner', [{ role: 'user', content: 'hi' }]), (err: Error) => {
      assert.ok(err instanceof ModelUnavailableError);
      assert.match(err.message, new RegExp(`^planner \\(coda-planner at ${server.url.replace(/[.]/g, '\\.')}\\) answered 500`));
      return true;
    });
    assert.equal(calls, 3, 'one request and two retries');
  });

  it('does not retry other 4xx answers: they are final', async () => {
    let calls = 0;
    script = () => (calls++, { status: 400, message: 'bad request' });
    await assert.rejects(gateway().complete('planner', [{ role: 'user', content: 'hi' }]), (err: Error) => err instanceof ModelRequestError && /answered 400/.test(err.message));
    assert.equal(calls, 1);
  });

  it('times out a model that does not answer', async () => {
    script = () => new Promise<Reply>(() => undefined) as unknown as Reply;
    const slow = gateway((models) => {
      models.planner.timeoutSeconds = 0.5;
      models.planner.maxRetries = 0;
    });
    await assert.rejects(slow.complete('planner', [{ role: 'user', content: 'hi' }]), (err: Error) => err instanceof ModelUnavailableError && /timed out/i.test(err.message));
  });

  it('a double answering after its configured latency: the gateway times it, and a shorter timeout gives up on it', async () => {
    const slow = await startScriptedServer(() => ({ texts: ['late'] }), { latencyMs: 400 });
    try {
      const env = { CODA_PLANNER_URL: slow.url, CODA_EXECUTOR_URL: slow.url, CODA_PLANNER_API_KEY: 'k', CODA_EXECUTOR_API_KEY: 'k' };
      const models = structuredClone(loadConfig(REPO_CONFIG, env).models);
      const answered = await new ModelGateway({ models, images: readOnlyImages(async () => SCREENSHOT), env }).complete('planner', [{ role: 'user', content: 'hi' }]);
      assert.deepEqual(answered.texts, ['late']);
      assert.ok(answered.latencyMs >= 400, `the reply waited its latency: ${answered.latencyMs} ms`);
      models.planner.timeoutSeconds = 0.1;
      models.planner.maxRetries = 0;
      await assert.rejects(new ModelGateway({ models, images: readOnlyImages(async () => SCREENSHOT), env }).complete('planner', [{ role: 'user', content: 'hi' }]), (err: Error) => err instanceof ModelUnavailableError && /timed out/i.test(err.message));
    } finally {
      await slow.close();
    }
  });

  it('names the missing API key variable', async () => {
    const config = loadConfig(REPO_CONFIG, {});
    const bare = new ModelGateway({ models: config.models, images: readOnlyImages(async () => SCREENSHOT), env: {} });
    await assert.rejects(bare.complete('planner', [{ role: 'user', content: 'hi' }]), /models\.planner\.apiKeyEnv: environment variable CODA_PLANNER_API_KEY is not set/);
  });

  it('caches prepared images by content, never by key: a rewritten key sends the new picture', async () => {
    script = () => ({ texts: ['ok'] });
    const small = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const versions = [SCREENSHOT, SCREENSHOT, small];
    const env = { CODA_PLANNER_URL: server.url, CODA_PLANNER_API_KEY: 'k' };
    const g = new ModelGateway({ models: loadConfig(REPO_CONFIG, env).models, images: readOnlyImages(async () => versions.shift()!), env });
    await g.complete('planner', [{ role: 'user', content: [image('steps/0001/screenshot.png'), image('steps/0001/screenshot.png')] }]);
    assert.deepEqual(imageSizes(seen.at(-1)!), [[1280, 720], [1280, 720]]);
    await g.complete('planner', [{ role: 'user', content: [image('steps/0001/screenshot.png')] }]);
    assert.deepEqual(imageSizes(seen.at(-1)!), [[800, 600]], 'the key was rewritten (a resumed step): its new content is sent');
  });
});
