import OpenAI, { APIError, APIConnectionError } from 'openai';
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { secretFromEnv, type Env } from '../../config/load';
import { preparedBoxes, type Config, type ModelEndpoint } from '../../config/schema';
import type { Size } from '../../core/images';
import type { ChatMessage, ContentPart } from '../../core/prompts/messages';
import type { OrchestratorMetrics } from '../metrics';
import { ImagePreparer, s3Images, type ImageSource } from './images';
import type { ObjectStore } from '../storage/object-store';

export type { ImageSource } from './images';

export type ModelRole = 'planner' | 'executor' | 'taskGenerator' | `judge:${string}`;

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface Completion {
  /** One text per sample (`n`). */
  readonly texts: string[];
  readonly model: string;
  readonly baseUrl: string;
  readonly latencyMs: number;
  readonly usage: Usage;
  /** Size of the (last) image actually sent, which is the space a UI-TARS reply's coordinates live in. */
  readonly imageSize?: { readonly width: number; readonly height: number };
  /** How many images were sent, and their pixels in all (what a judge vote costs). */
  readonly images: { readonly count: number; readonly pixels: number };
}

export interface CompleteOptions {
  /** Samples per request (GRPO groups). */
  readonly n?: number;
  readonly temperature?: number;
  readonly topP?: number;
  /** Sampling seed (vLLM honours it per request), so a sampled reply can be reproduced. */
  readonly seed?: number;
  /** The model name to ask for instead of the role's (a planner checkpoint served as a LoRA adapter). */
  readonly model?: string;
  /** OpenAI's `user` field: who the request is for (here, the trajectory a judge reviews), for the server's logs. */
  readonly user?: string;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
  /** Box an image part marked `resolution: 'low'` is fitted into (the judge's cheap pass). */
  readonly lowResolution?: { readonly width: number; readonly height: number };
  /** Box an image part marked `resolution: 'high'` is fitted into; default: the role's `image` box. */
  readonly highResolution?: { readonly width: number; readonly height: number };
  /** The size of the screenshots the messages name (the desktop's screen): what finds their prepared variants without reading them. */
  readonly sourceSize?: Size;
}

/** A model call that will not succeed by retrying (bad request, auth, unknown model). */
export class ModelRequestError extends Error {
  constructor(
    message: string,
    readonly role: ModelRole,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelRequestError';
  }
}

/** A model call that may succeed later (rate limit, server error, endpoint unreachable). */
export class ModelUnavailableError extends Error {
  constructor(
    message: string,
    readonly role: ModelRole,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelUnavailableError';
  }
}

/** What a ModelGateway is built from. */
export interface ModelGatewayOptions {
  /** The model endpoints by role (temporal.yaml `models`). */
  readonly models: Config['models'];
  /** Where the screenshots that messages name by key are read. */
  readonly images: ImageSource;
  /** Where the endpoints' `apiKeyEnv` variables are read; default process.env. */
  readonly env?: Env;
  /** Where call latencies are recorded by role (the orchestrator's metrics endpoint). */
  readonly latency?: OrchestratorMetrics['modelSeconds'];
  /** Finds screenshots' variants; default: one that knows no prepared boxes, so every image is resized here. */
  readonly preparer?: ImagePreparer;
}

/**
 * One OpenAI-compatible client per role of temporal.yaml (vLLM in production, the scripted
 * double in tests and the demo: the same code either way). Screenshot keys in messages become
 * images at the resolution the role asks for — the variant the capturing host prepared, sent as
 * a data URL or as a presigned URL per the endpoint's `imageTransport` (activities/models/images.ts).
 * The SDK retries 408/409/429/5xx and connection failures with backoff; what is left is
 * classified for the activity's retry policy.
 */
export class ModelGateway {
  /** Finds screenshots' variants; its `preparedHere` counts the images it had to resize itself. */
  readonly preparer: ImagePreparer;

  constructor(
    private readonly options: ModelGatewayOptions,
    /** The clients made so far, shared with the gateways withImages makes. */
    private readonly clients = new Map<ModelRole, { client: OpenAI; endpoint: ModelEndpoint }>(),
  ) {
    this.preparer = options.preparer ?? new ImagePreparer([]);
  }

  get images(): ImageSource {
    return this.options.images;
  }

  /** The same endpoints, clients and preparer, reading screenshots from `images`. */
  withImages(images: ImageSource): ModelGateway {
    return new ModelGateway({ ...this.options, images, preparer: this.preparer }, this.clients);
  }

  async complete(role: ModelRole, messages: readonly ChatMessage[], opts: CompleteOptions = {}): Promise<Completion> {
    const { client, endpoint } = this.clientFor(role);
    const sent: SentImages = { count: 0, pixels: 0 };
    const resolved = await Promise.all(messages.map((m) => this.resolveMessage(m, endpoint, opts, sent)));
    const started = Date.now();
    const observe = (outcome: 'ok' | 'error'): void =>
      this.options.latency?.observe({ role: role.startsWith('judge:') ? 'judge' : role, model: opts.model ?? endpoint.model, outcome }, (Date.now() - started) / 1000);
    try {
      const response = await client.chat.completions.create(
        {
          model: opts.model ?? endpoint.model,
          messages: resolved,
          n: opts.n ?? 1,
          temperature: opts.temperature ?? endpoint.temperature,
          max_tokens: opts.maxTokens ?? endpoint.maxTokens,
          ...(opts.topP === undefined ? {} : { top_p: opts.topP }),
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
          ...(opts.user === undefined ? {} : { user: opts.user }),
        },
        { signal: opts.signal },
      );
      const texts = [...response.choices].sort((a, b) => a.index - b.index).map((c) => c.message.content ?? '');
      if (texts.length !== (opts.n ?? 1)) {
        throw new ModelUnavailableError(`${role} returned ${texts.length} samples, asked for ${opts.n ?? 1}`, role);
      }
      observe('ok');
      return {
        texts,
        model: response.model || endpoint.model,
        baseUrl: endpoint.baseUrl,
        latencyMs: Date.now() - started,
        usage: { promptTokens: response.usage?.prompt_tokens ?? 0, completionTokens: response.usage?.completion_tokens ?? 0 },
        imageSize: sent.size,
        images: { count: sent.count, pixels: sent.pixels },
      };
    } catch (err) {
      observe('error');
      throw classify(role, endpoint, err);
    }
  }

  /** The sampling temperature a role's endpoint uses unless a call says otherwise. */
  temperatureOf(role: ModelRole): number {
    return this.lookup(role).temperature;
  }

  /** The endpoint of a role (its model, base URL and limits). */
  endpointOf(role: ModelRole): ModelEndpoint & { readonly maxImages?: number } {
    return this.lookup(role);
  }

  private clientFor(role: ModelRole): { client: OpenAI; endpoint: ModelEndpoint } {
    let entry = this.clients.get(role);
    if (entry === undefined) {
      const endpoint = this.lookup(role);
      // vLLM started without --api-key accepts any key; the SDK insists on one.
      const apiKey = endpoint.apiKeyEnv === undefined ? 'EMPTY' : apiKeyOf(endpoint.apiKeyEnv, role, this.options.env ?? process.env);
      const client = new OpenAI({
        baseURL: endpoint.baseUrl,
        apiKey,
        timeout: endpoint.timeoutSeconds * 1000,
        maxRetries: endpoint.maxRetries,
      });
      entry = { client, endpoint };
      this.clients.set(role, entry);
    }
    return entry;
  }

  private lookup(role: ModelRole): ModelEndpoint & { readonly maxImages?: number } {
    if (role === 'planner' || role === 'executor' || role === 'taskGenerator') return this.options.models[role];
    const name = role.slice('judge:'.length);
    const judge = this.options.models.judges.find((j) => j.name === name);
    if (judge === undefined) {
      throw new ModelRequestError(`unknown judge "${name}": temporal.yaml names ${this.options.models.judges.map((j) => j.name).join(', ')}`, role);
    }
    return judge;
  }

  private async resolveMessage(message: ChatMessage, endpoint: ModelEndpoint, opts: CompleteOptions, sent: SentImages): Promise<ChatCompletionMessageParam> {
    if (typeof message.content === 'string') return { role: message.role, content: message.content } as ChatCompletionMessageParam;
    const parts: ChatCompletionContentPart[] = await Promise.all(
      message.content.map(async (part: ContentPart): Promise<ChatCompletionContentPart> => {
        if (part.type === 'text') return { type: 'text', text: part.text };
        const box =
          part.resolution === 'low' && opts.lowResolution !== undefined
            ? opts.lowResolution
            : part.resolution === 'high' && opts.highResolution !== undefined
              ? opts.highResolution
              : endpoint.image;
        const { url, width, height } = await this.preparer.image(this.images, {
          key: part.key,
          ...(box === undefined ? {} : { box }),
          transport: endpoint.imageTransport,
          ...(opts.sourceSize === undefined ? {} : { sourceSize: opts.sourceSize }),
        });
        sent.size = { width, height };
        sent.count += 1;
        sent.pixels += width * height;
        return { type: 'image_url', image_url: { url } };
      }),
    );
    if (message.role === 'assistant') {
      return { role: 'assistant', content: parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('\n') };
    }
    return { role: message.role, content: parts } as ChatCompletionMessageParam;
  }

}

interface SentImages {
  size?: { width: number; height: number };
  count: number;
  pixels: number;
}

function apiKeyOf(name: string, role: ModelRole, env: Env): string {
  return secretFromEnv(name, `models.${role.startsWith('judge:') ? 'judges' : role}.apiKeyEnv`, env);
}

const NON_RETRYABLE_STATUS = (status: number): boolean => status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429;

function classify(role: ModelRole, endpoint: ModelEndpoint, err: unknown): Error {
  if (err instanceof ModelRequestError || err instanceof ModelUnavailableError) return err;
  const where = `${role} (${endpoint.model} at ${endpoint.baseUrl})`;
  if (err instanceof APIConnectionError) return new ModelUnavailableError(`${where} is unreachable: ${err.message}`, role);
  if (err instanceof APIError && err.status !== undefined) {
    const message = `${where} answered ${err.status}: ${err.message}`;
    return NON_RETRYABLE_STATUS(err.status) ? new ModelRequestError(message, role, err.status) : new ModelUnavailableError(message, role, err.status);
  }
  return new ModelUnavailableError(`${where} failed: ${(err as Error).message ?? String(err)}`, role);
}

/**
 * The gateway of a worker that reads screenshots from S3 (the orchestrator, the reward service):
 * the variant the capturing host stored for each role's box, each read once and kept by the preparer,
 * sent by value or by a URL presigned for `storage.presignSeconds`.
 */
export function s3Gateway(
  config: Pick<Config, 'models' | 'judging' | 'storage'>,
  store: ObjectStore,
  extra: Pick<ModelGatewayOptions, 'env' | 'latency' | 'preparer'> = {},
): ModelGateway {
  const presign = config.storage.presignSeconds;
  return new ModelGateway({
    models: config.models,
    images: s3Images(store, presign),
    ...extra,
    preparer: extra.preparer ?? new ImagePreparer(preparedBoxes(config), presign),
  });
}
