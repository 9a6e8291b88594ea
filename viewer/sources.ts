import { isGrpcServiceError, type Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { z } from 'zod';
import type { LoadedConfig } from '../config/load';
import { temporalTrouble } from '../config/temporal-connection';
import { formatIssues } from '../core/validation';
import type { ObjectStore } from '../activities/storage/object-store';
import { badRequest, damaged, notFound, unavailable, ViewerError } from './errors';

/**
 * Everything the viewer reads, and only from S3 and Temporal: objects (JSON read whole, small;
 * screenshots streamed), visibility, descriptions, queries and histories. Failures become
 * ViewerErrors: a missing object or workflow is a 404 naming it, damaged JSON a 422 naming what is
 * wrong, a store or server that does not answer a 503 naming which. No call waits longer than
 * `timeoutMs`, so a page never hangs on a dead backend.
 */
export class ViewerSources {
  readonly prefix: string;

  constructor(
    readonly config: LoadedConfig,
    readonly store: ObjectStore,
    readonly client: Client,
    private readonly timeoutMs = 8_000,
  ) {
    this.prefix = config.storage.prefix;
  }

  // ---------------------------------------------------------------------------------------------
  // S3

  private async s3<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw unavailable('S3', `${this.config.storage.endpoint} (bucket ${this.config.storage.bucket})`, reason(err));
    }
  }

  uri(key: string): string {
    return this.store.uri(key);
  }

  /** Every key under `prefix`. */
  list(prefix: string): Promise<string[]> {
    return this.s3(() => this.store.list(prefix));
  }

  /** The object's JSON, or undefined when it does not exist; damaged JSON throws naming `what`. */
  async optionalJson(key: string, what: string): Promise<unknown> {
    const body = await this.s3(() => this.store.tryGet(key));
    if (body === undefined) return undefined;
    const text = body.toString('utf8');
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw damaged(what, this.uri(key), [`not JSON: ${(err as Error).message}`, `it begins: ${text.slice(0, 300)}`]);
    }
  }

  /** The object's JSON; a missing object is a 404 naming `what`. */
  async json(key: string, what: string): Promise<unknown> {
    const value = await this.optionalJson(key, what);
    if (value === undefined) throw notFound(what, `there is no ${this.uri(key)}`);
    return value;
  }

  /** The object's JSON checked against `schema`; every bad field is named. */
  async parsed<S extends z.ZodType>(schema: S, key: string, what: string): Promise<z.output<S>> {
    return check(schema, await this.json(key, what), what, this.uri(key));
  }

  stream(key: string): ReturnType<ObjectStore['stream']> {
    return this.s3(() => this.store.stream(key));
  }

  // ---------------------------------------------------------------------------------------------
  // Temporal

  /** Runs `op` on the Temporal client within the deadline; `what` names what it reads (`workflow <id>`). */
  async temporal<T>(what: string, op: (client: Client) => Promise<T>): Promise<T> {
    try {
      return await this.client.connection.withDeadline(Date.now() + this.timeoutMs, () => op(this.client));
    } catch (err) {
      throw await this.temporalError(what, err);
    }
  }

  private async temporalError(what: string, err: unknown): Promise<unknown> {
    if (err instanceof ViewerError) return err;
    if (err instanceof WorkflowNotFoundError) return notFound(what, `Temporal has no ${what} in namespace ${this.config.temporal.namespace}`);
    const grpc = isGrpcServiceError(err) ? err : isGrpcServiceError((err as { cause?: unknown })?.cause) ? (err as { cause: { code: number; details?: string } }).cause : undefined;
    // 3 INVALID_ARGUMENT: a filter the server cannot read; 5 NOT_FOUND: no such workflow.
    if (grpc?.code === 3) return badRequest(what, grpc.details ?? reason(err));
    if (grpc?.code === 5) return notFound(what, `Temporal has no ${what} in namespace ${this.config.temporal.namespace}`);
    // A TLS or API key problem is said in temporal.yaml's words (the field to set), not as a timeout.
    const trouble = await temporalTrouble(this.config, err).catch(() => undefined);
    return unavailable('Temporal', `${this.config.temporal.address} (namespace ${this.config.temporal.namespace})`, trouble ?? reason(err));
  }
}

/** `value` checked against `schema`, or a 422 naming every bad field of `what` at `where`. */
export function check<S extends z.ZodType>(schema: S, value: unknown, what: string, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw damaged(what, where, formatIssues(result.error.issues));
  return result.data;
}

/**
 * The telling part of an error: its message and its cause's (the SDK says "Failed to list
 * workflows", gRPC why), or its code where there is no message (AWS SDK errors of a refused
 * connection have none).
 */
function reason(err: unknown): string {
  const e = err as { message?: string; code?: string; name?: string; cause?: { message?: string; code?: string } };
  const parts = [e.message || e.code || e.name, e.cause?.message || e.cause?.code].filter((s): s is string => typeof s === 'string' && s !== '');
  return [...new Set(parts.map((s) => s.split('\n')[0]))].join(': ') || String(err);
}
