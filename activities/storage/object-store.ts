import { createWriteStream } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { StorageConfig } from '../../config/schema';
import { safeRelative } from '../../core/keys';
import { mapLimited } from '../concurrency';
import { secretFromEnv, type Env } from '../../config/load';

/**
 * Every trajectory byte goes through this: S3 with the endpoint from temporal.yaml (path-style),
 * so MinIO, AWS S3 or any S3-compatible store work unchanged. Keys are full keys, prefix included
 * (see core/keys.ts), so what a workflow history shows is exactly what is in the bucket.
 */
export class ObjectStore {
  /**
   * @param outageToleranceMs how long a call keeps retrying while the store is unreachable or
   *   answers 5xx (a restarting MinIO, a throttling S3) before it gives up; 4xx answers fail at once.
   */
  constructor(
    readonly client: S3Client,
    readonly bucket: string,
    private readonly outageToleranceMs = 120_000,
    /** Signs URLs for another address of the same store (what model servers reach), when there is one. */
    private readonly presigner: S3Client = client,
  ) {}

  /** A URL anyone holding it can GET the object from for `seconds` (a model server fetching an image). */
  presignedUrl(key: string, seconds: number): Promise<string> {
    return getSignedUrl(this.presigner, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: seconds });
  }

  /** Sends a command, waiting out outages with backoff (nothing written is lost to a blip). */
  private async send<T>(call: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.outageToleranceMs;
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        return await call();
      } catch (err) {
        if (!isOutage(err) || Date.now() + delay > deadline) throw err;
        await sleep(delay);
      }
    }
  }

  async put(key: string, body: Uint8Array | string, contentType = 'application/octet-stream'): Promise<void> {
    await this.send(() => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType })));
  }

  /**
   * Uploads a file from disk without holding it in memory: one PUT up to `partBytes`, a multipart
   * upload of `partBytes` parts beyond (one PUT takes at most 5 GB; parts must be at least 5 MiB).
   */
  async putFile(key: string, file: string, partBytes = 256 * 1024 * 1024): Promise<void> {
    // Opened once, before anything is sent: a file deleted meanwhile (a trainer rotating its
    // checkpoints while they upload) fails this call with ENOENT rather than an unhandled error of
    // a stream opened later, and once open it stays readable to the end.
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const Bucket = this.bucket;
      const read = (start: number, length: number): Readable => handle.createReadStream({ start, end: start + length - 1, autoClose: false });
      if (size <= partBytes) {
        // An empty file as an empty body: the SDK drops a zero ContentLength and would warn of a stream of unknown length.
        await this.send(() => this.client.send(new PutObjectCommand({ Bucket, Key: key, Body: size === 0 ? Buffer.alloc(0) : read(0, size), ContentLength: size })));
        return;
      }
      const { UploadId } = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket, Key: key })));
      try {
        const Parts: Array<{ ETag?: string; PartNumber: number }> = [];
        for (let start = 0; start < size; start += partBytes) {
          const PartNumber = Parts.length + 1;
          const length = Math.min(partBytes, size - start);
          const { ETag } = await this.send(() => this.client.send(new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber, Body: read(start, length), ContentLength: length })));
          Parts.push({ ETag, PartNumber });
        }
        await this.send(() => this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts } })));
      } catch (err) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => undefined);
        throw err;
      }
    } finally {
      await handle.close();
    }
  }

  /** Downloads an object to a file, streaming; the file appears complete or not at all. */
  async getFile(key: string, file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.partial`;
    await this.send(async () => {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) throw new Error(`s3://${this.bucket}/${key} has no body`);
      await pipeline(out.Body as Readable, createWriteStream(partial));
    });
    await rename(partial, file);
  }

  /**
   * Downloads every object below `prefix/` into `dir` in the same layout, 4 at a time; their keys
   * ([] when there are none). Every local path is checked before anything is written
   * (safeRelative): a key such as `prefix/../x` is refused, not written outside `dir`.
   */
  async getFolder(prefix: string, dir: string, signal?: AbortSignal): Promise<string[]> {
    const keys = await this.list(`${prefix}/`);
    const files = keys.map((key) => ({ key, file: path.join(dir, safeRelative(key.slice(prefix.length + 1), this.uri(key))) }));
    await mapLimited(files, 4, ({ key, file }) => {
      signal?.throwIfAborted();
      return this.getFile(key, file);
    });
    return keys;
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.put(key, JSON.stringify(value, null, 2), 'application/json');
  }

  /** The object's bytes; one larger than `maxBytes` is refused by its length before its body is read. */
  async get(key: string, maxBytes = Infinity): Promise<Buffer> {
    return this.send(async () => {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) throw new Error(`s3://${this.bucket}/${key} has no body`);
      if ((out.ContentLength ?? 0) > maxBytes) {
        (out.Body as Readable).destroy();
        throw new Error(`s3://${this.bucket}/${key} is ${out.ContentLength} bytes, more than the ${maxBytes} read here`);
      }
      return Buffer.from(await out.Body.transformToByteArray());
    });
  }

  async getJson<T = unknown>(key: string): Promise<T> {
    return JSON.parse((await this.get(key)).toString('utf8')) as T;
  }

  /** Undefined when the key does not exist; other failures throw. */
  async tryGet(key: string): Promise<Buffer | undefined> {
    try {
      return await this.get(key);
    } catch (err) {
      if (isNoSuchKey(err)) return undefined;
      throw err;
    }
  }

  /**
   * The object as a stream, to pass on without holding it in memory (the viewer's screenshots);
   * undefined when the key does not exist.
   */
  async stream(key: string): Promise<{ body: Readable; length?: number; contentType?: string } | undefined> {
    try {
      const out = await this.send(() => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
      if (!(out.Body instanceof Readable)) throw new Error(`s3://${this.bucket}/${key} has no body`);
      return { body: out.Body, length: out.ContentLength, contentType: out.ContentType };
    } catch (err) {
      if (isNoSuchKey(err)) return undefined;
      throw err;
    }
  }

  /** The object's size in bytes. */
  async size(key: string): Promise<number> {
    const head = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
    return head.ContentLength ?? 0;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return true;
    } catch (err) {
      if (err instanceof NotFound || (err as { name?: string }).name === 'NotFound') return false;
      throw err;
    }
  }

  /** Every key under `prefix`, in lexical order, across as many pages (of `pageSize` keys) as it takes. */
  async list(prefix: string, pageSize = 1000): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.send(() =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: pageSize })),
      );
      for (const item of page.Contents ?? []) if (item.Key !== undefined) keys.push(item.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys;
  }

  async delete(key: string): Promise<void> {
    await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  /** Creates the bucket if it is missing (idempotent). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
      }
    }
  }

  /** s3:// URI of a key, for people. */
  uri(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }
}

const isNoSuchKey = (err: unknown): boolean => err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey';

/** Unreachable, timed out, or a 5xx/throttling answer: worth waiting for. */
function isOutage(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500 || status === 429 || status === 408;
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN'].includes(e.code ?? '') || ['TimeoutError', 'AbortError'].includes(e.name ?? '');
}

/**
 * The deployment's store. Workers wait out outages (the default); a reader that must answer at
 * once (the viewer) gives `outageToleranceMs: 0` and a `timeoutMs` per request.
 */
export function createObjectStore(storage: StorageConfig, env: Env = process.env, opts: { outageToleranceMs?: number; timeoutMs?: number } = {}): ObjectStore {
  const clientFor = (endpoint: string) =>
    new S3Client({
      endpoint,
      region: storage.region,
      forcePathStyle: storage.forcePathStyle,
      // The SDK's default CRC32 on every body costs CPU on every screenshot and decision; S3 checks
      // integrity on its own (Content-MD5 where an operation requires it).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Resolves each command kind's middleware stack once instead of on every send (the orchestrator
      // sends a GET and a PUT per rollout step); sends with per-call options still resolve their own.
      cacheMiddleware: true,
      credentials: {
        accessKeyId: secretFromEnv(storage.accessKeyIdEnv, 'storage.accessKeyIdEnv', env),
        secretAccessKey: secretFromEnv(storage.secretAccessKeyEnv, 'storage.secretAccessKeyEnv', env),
      },
      ...(opts.timeoutMs === undefined ? {} : { requestHandler: { connectionTimeout: opts.timeoutMs, requestTimeout: opts.timeoutMs } }),
    });
  const client = clientFor(storage.endpoint);
  const presigner = storage.presignEndpoint === undefined ? client : clientFor(storage.presignEndpoint);
  return new ObjectStore(client, storage.bucket, opts.outageToleranceMs, presigner);
}
