import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * TEST DOUBLE. A small OpenAI-compatible HTTP server (POST /v1/chat/completions with image parts,
 * `n` samples, sampling fields and usage; GET /v1/models) whose replies come from a scripted
 * policy instead of a model. It stands in for the vLLM servers that cannot run on machines
 * without a GPU; the production client code talks to it unchanged. Errors have vLLM's shape,
 * checked against vLLM's serving code (vllm/entrypoints/openai: ErrorResponse with an `error`
 * object of message, type, param, code; "The model `x` does not exist." as a 404 NotFoundError;
 * "At most N image(s) may be provided in one prompt." as a 400 BadRequestError).
 *
 * With `runtimeLoraUpdating` (vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING) it also has vLLM's runtime
 * LoRA routes, checked against vllm/entrypoints/openai/models/serving.py (OpenAIServingModels) and
 * the lora api_router: POST /v1/load_lora_adapter {lora_name, lora_path} answers 200 with a
 * plain-text body, 400 when a field is missing or the name is taken, 404 when the path holds no
 * adapter (adapter_config.json); POST /v1/unload_lora_adapter; GET /v1/models lists adapters with
 * their path as `root` and the first model as `parent`. A request for an adapter is answered by the
 * policy as for its parent, told which adapter (name and folder) was asked for: the learning
 * planner double reads its weights from that folder.
 * Without the setting those routes do not exist (FastAPI's 404).
 *
 * Compared with a real run of the planner's CPU server, LLaMA-Factory 0.9.5's API (`llamafactory-cli
 * api`, Hugging Face backend, on the tiny Qwen2.5-VL: test/training/real-server.test.ts): what the
 * gateway reads answers alike — `n` choices by index, `usage`, the asked `model` echoed; no messages
 * refused 400; an image no decoder opens answered with Starlette's bare 500 "Internal Server Error"
 * and the connection closed (PIL's error escapes LLaMA-Factory's request handling, and vLLM's chat preprocessing, read at
 * commit 003fe59, catches only ValueError, TypeError, RuntimeError and template errors). Where this
 * double keeps vLLM's ways LLaMA-Factory differs: its errors are `{"detail": ...}`, malformed bodies
 * 422; it refuses two user turns in a row (400 "Only supports u/a/u/a/u..."), image URLs on private
 * addresses (400 "Invalid URL: 403: ..."), answers any `model` with the one it serves and drops `seed`.
 */

export interface ChatRequest {
  readonly model: string;
  readonly messages: ReadonlyArray<{ role: string; content: string | ReadonlyArray<Record<string, unknown>> }>;
  readonly n: number;
  readonly temperature: number;
  readonly topP?: number;
  readonly seed?: number;
  /** OpenAI's `user` field (who the request is for). */
  readonly user?: string;
  readonly maxTokens?: number;
  /** The runtime-loaded LoRA adapter asked for (the request's `model` is then its parent's name). */
  readonly adapter?: { readonly name: string; readonly path: string };
}

/** Texts of the `n` samples, or an HTTP error to send instead (to exercise clients' retry paths). */
export type Reply = { readonly texts: readonly string[] } | { readonly status: number; readonly message: string };

export type Policy = (request: ChatRequest) => Reply | Promise<Reply>;

export interface ScriptedServer {
  readonly url: string;
  readonly server: Server;
  /** Requests served so far, per model name. */
  readonly served: Map<string, number>;
  /** Images received so far per model name, by how they came: inline (data URLs) or by reference (http URLs). */
  readonly images: Map<string, { data: number; url: number }>;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const ERROR_TYPES: Readonly<Record<number, string>> = { 400: 'BadRequestError', 404: 'NotFoundError', 429: 'RateLimitError', 500: 'InternalServerError', 503: 'ServiceUnavailableError' };

/** vLLM's error body: {"error": {"message", "type", "param", "code"}}. */
export const error = (res: ServerResponse, status: number, message: string, type = ERROR_TYPES[status] ?? 'BadRequestError'): void =>
  json(res, status, { error: { message, type, param: null, code: status } });

const text = (res: ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

interface Adapter {
  readonly path: string;
  readonly parent: string;
}

/** vLLM's load/unload routes over the adapters map; true when the request was one of them. */
async function loraRoute(req: IncomingMessage, res: ServerResponse, adapters: Map<string, Adapter>, parent: string): Promise<boolean> {
  const route = req.url === '/v1/load_lora_adapter' ? 'load' : req.url === '/v1/unload_lora_adapter' ? 'unload' : undefined;
  if (req.method !== 'POST' || route === undefined) return false;
  let body: { lora_name?: unknown; lora_path?: unknown };
  try {
    body = JSON.parse(await readBody(req)) as typeof body;
  } catch {
    error(res, 400, 'body is not valid JSON');
    return true;
  }
  const name = typeof body.lora_name === 'string' ? body.lora_name : '';
  if (route === 'unload') {
    if (name === '') error(res, 400, "'lora_name' needs to be provided to unload a LoRA adapter.", 'InvalidUserInput');
    else if (!adapters.delete(name)) error(res, 404, `The lora adapter '${name}' cannot be found.`, 'NotFoundError');
    else text(res, 200, `Success: LoRA adapter '${name}' removed successfully.`);
    return true;
  }
  const adapterPath = typeof body.lora_path === 'string' ? body.lora_path : '';
  if (name === '' || adapterPath === '') error(res, 400, "Both 'lora_name' and 'lora_path' must be provided.", 'InvalidUserInput');
  else if (adapters.has(name)) error(res, 400, `The lora adapter '${name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`, 'InvalidUserInput');
  else if (!existsSync(path.join(adapterPath, 'adapter_config.json'))) error(res, 404, `Loading lora ${name} failed: No adapter found for ${adapterPath}`, 'NotFoundError');
  else {
    adapters.set(name, { path: adapterPath, parent });
    text(res, 200, `Success: LoRA adapter '${name}' added successfully.`);
  }
  return true;
}

/** The whole request body as text (shared with the tests' own server doubles). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Roughly what a tokenizer would count: 4 characters a token, a fixed cost per image. */
function promptTokens(request: ChatRequest): number {
  let chars = 0;
  let images = 0;
  for (const m of request.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const part of m.content) part.type === 'image_url' ? images++ : (chars += String(part.text ?? '').length);
  }
  return Math.ceil(chars / 4) + images * 1_000;
}

/** vLLM's VLLM_IMAGE_FETCH_TIMEOUT default: how long it waits for an image URL. */
const IMAGE_FETCH_TIMEOUT_MS = 5_000;

/**
 * Fetches every http(s) image of a request, as vLLM does itself, and puts the bytes in place as
 * data URLs for the policy; a failed fetch is the request's fault, a 400 (as vLLM answers).
 */
async function fetchImages(request: ChatRequest): Promise<string | undefined> {
  for (const message of request.messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      const image = part.image_url as { url: string } | undefined;
      if (part.type !== 'image_url' || image === undefined || !/^https?:/.test(image.url)) continue;
      try {
        const res = await fetch(image.url, { signal: AbortSignal.timeout(IMAGE_FETCH_TIMEOUT_MS) });
        if (!res.ok) return `Failed to fetch image from ${image.url.split('?')[0]}: ${res.status} ${res.statusText}`;
        const type = res.headers.get('content-type') ?? 'image/png';
        image.url = `data:${type.startsWith('image/') ? type : 'image/png'};base64,${Buffer.from(await res.arrayBuffer()).toString('base64')}`;
      } catch (err) {
        return `Failed to fetch image from ${image.url.split('?')[0]}: ${(err as Error).message}`;
      }
    }
  }
  return undefined;
}

/** PNG's and JPEG's first bytes: what an image decoder recognises a screenshot by. */
const IMAGE_SIGNATURES = [Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from([0xff, 0xd8, 0xff])];

/** Whether some data-URL image of the request is neither a PNG nor a JPEG (bytes no decoder can open). */
function undecodableImage(request: ChatRequest): boolean {
  return request.messages.some(
    (message) =>
      typeof message.content !== 'string' &&
      message.content.some((part) => {
        const url = (part.image_url as { url?: string } | undefined)?.url;
        if (part.type !== 'image_url' || url === undefined || !url.startsWith('data:')) return false;
        const bytes = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
        return !IMAGE_SIGNATURES.some((signature) => bytes.subarray(0, signature.length).equals(signature));
      }),
  );
}

/** Validates a request the way an OpenAI-compatible server would, naming the bad field. */
function parseRequest(body: unknown): ChatRequest | string {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') return 'model: expected a non-empty string';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: expected a non-empty array';
  for (const [i, m] of (b.messages as unknown[]).entries()) {
    const msg = m as Record<string, unknown>;
    if (!['system', 'user', 'assistant'].includes(String(msg.role))) return `messages[${i}].role: expected system, user or assistant`;
    if (typeof msg.content !== 'string' && !Array.isArray(msg.content)) return `messages[${i}].content: expected a string or an array of parts`;
    if (Array.isArray(msg.content)) {
      for (const [j, part] of (msg.content as Array<Record<string, unknown>>).entries()) {
        if (part.type === 'image_url') {
          const url = (part.image_url as { url?: unknown } | undefined)?.url;
          if (typeof url !== 'string' || !(/^data:image\/(png|jpeg);base64,[A-Za-z0-9+/=]+$/.test(url) || /^https?:\/\/\S+$/.test(url))) {
            return `messages[${i}].content[${j}].image_url.url: expected a base64 PNG or JPEG data URL or an http(s) URL`;
          }
        } else if (part.type !== 'text' || typeof part.text !== 'string') {
          return `messages[${i}].content[${j}]: expected a text or image_url part`;
        }
      }
    }
  }
  const n = b.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 64) return 'n: expected an integer in 1..64';
  const temperature = b.temperature ?? 1;
  if (typeof temperature !== 'number' || temperature < 0 || temperature > 2) return 'temperature: expected a number in 0..2';
  if (b.top_p !== undefined && (typeof b.top_p !== 'number' || b.top_p <= 0 || b.top_p > 1)) return 'top_p: expected a number in (0, 1]';
  if (b.seed !== undefined && (typeof b.seed !== 'number' || !Number.isInteger(b.seed))) return 'seed: expected an integer';
  if (b.user !== undefined && typeof b.user !== 'string') return 'user: expected a string';
  if (b.max_tokens !== undefined && (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens) || b.max_tokens < 1)) return 'max_tokens: expected an integer >= 1';
  return {
    model: b.model,
    messages: b.messages as ChatRequest['messages'],
    n,
    temperature,
    ...(b.top_p === undefined ? {} : { topP: b.top_p as number }),
    ...(b.seed === undefined ? {} : { seed: b.seed as number }),
    ...(b.user === undefined ? {} : { user: b.user as string }),
    ...(b.max_tokens === undefined ? {} : { maxTokens: b.max_tokens as number }),
  };
}

export interface ScriptedServerOptions {
  readonly port?: number;
  readonly host?: string;
  /** Model names served; the first is the parent of runtime-loaded LoRA adapters. */
  readonly models?: readonly string[];
  /** vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING: the load/unload routes exist. */
  readonly runtimeLoraUpdating?: boolean;
  /** Milliseconds an answered completion takes (generation time); refusals answer at once, as vLLM's do. */
  readonly latencyMs?: number;
}

export async function startScriptedServer(policy: Policy, opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const served = new Map<string, number>();
  const images = new Map<string, { data: number; url: number }>();
  const adapters = new Map<string, Adapter>();
  const parent = opts.models?.[0] ?? 'scripted';
  let counter = 0;
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        return json(res, 200, {
          object: 'list',
          data: [
            ...(opts.models ?? []).map((id) => ({ id, object: 'model', owned_by: 'scripted-double' })),
            ...[...adapters].map(([id, adapter]) => ({ id, object: 'model', owned_by: 'scripted-double', root: adapter.path, parent: adapter.parent })),
          ],
        });
      }
      if (opts.runtimeLoraUpdating === true && (await loraRoute(req, res, adapters, parent))) return;
      // FastAPI's answer for a route it does not have, as vLLM gives it.
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { detail: 'Not Found' });
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return error(res, 400, 'body is not valid JSON');
      }
      const request = parseRequest(body);
      if (typeof request === 'string') return error(res, 400, request);
      served.set(request.model, (served.get(request.model) ?? 0) + 1);
      const counts = images.get(request.model) ?? { data: 0, url: 0 };
      for (const m of request.messages) {
        if (typeof m.content === 'string') continue;
        for (const part of m.content) if (part.type === 'image_url') counts[/^https?:/.test(String((part.image_url as { url?: string }).url)) ? 'url' : 'data'] += 1;
      }
      images.set(request.model, counts);
      const unfetched = await fetchImages(request);
      if (unfetched !== undefined) return error(res, 400, unfetched);
      // PIL's error on such bytes escapes both real servers' request handling: Starlette's bare 500,
      // after which uvicorn closes the connection.
      if (undecodableImage(request)) {
        res.shouldKeepAlive = false;
        return text(res, 500, 'Internal Server Error');
      }
      const adapter = adapters.get(request.model);
      const reply = await policy(adapter === undefined ? request : { ...request, model: adapter.parent, adapter: { name: request.model, path: adapter.path } });
      if ('status' in reply) return error(res, reply.status, reply.message);
      if ((opts.latencyMs ?? 0) > 0) await sleep(opts.latencyMs);
      const completion = reply.texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
      const prompt = promptTokens(request);
      json(res, 200, {
        id: `chatcmpl-scripted-${++counter}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: reply.texts.map((content, index) => ({ index, message: { role: 'assistant', content }, finish_reason: 'stop' })),
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      });
    })().catch((err: unknown) => error(res, 500, `scripted policy failed: ${(err as Error).message}`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/v1`,
    server,
    served,
    images,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
