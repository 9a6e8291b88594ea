import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { fittedSize, keyFor, type Size } from '../../core/images';
import { PromiseCache } from '../cache';
import type { ObjectStore } from '../storage/object-store';

/**
 * How screenshots named by key reach a model (issue 13): as the variant the capturing host stored
 * for the role's box (core/images.ts), so nothing here decodes or resizes an image; sent either
 * as a base64 data URL (the bytes pass through here, nothing else happens to them) or as a
 * presigned URL the model server fetches itself (no byte passes through here). Only a screenshot
 * without the variant it needs (captured before variants, or for a box no host prepares) is
 * resized here, once, and counted.
 */

/** Where screenshots referred to by key come from: S3 in workflows, memory in the direct benchmark loop. */
export interface ImageSource {
  read(key: string): Promise<Uint8Array>;
  /** Undefined when there is no such object. */
  tryRead(key: string): Promise<Uint8Array | undefined>;
  exists(key: string): Promise<boolean>;
  /** A URL the model server can GET the object from; absent where objects have none. */
  url?(key: string): Promise<string>;
}

/** Screenshots in S3, presigned for `presignSeconds` when sent by reference. */
export function s3Images(store: ObjectStore, presignSeconds: number): ImageSource {
  return {
    read: (key) => store.get(key),
    tryRead: (key) => store.tryGet(key),
    exists: (key) => store.exists(key),
    url: (key) => store.presignedUrl(key, presignSeconds),
  };
}

/** A source that can only read (memory in the direct benchmark loop, tests): no URLs, a failed read means no such object. */
export function readOnlyImages(read: (key: string) => Promise<Uint8Array>): ImageSource {
  return { read, tryRead: (key) => read(key).catch(() => undefined), exists: async (key) => (await read(key).catch(() => undefined)) !== undefined };
}

/** The same source, each object read at most once (a step's planner and executor share screens). */
export function memoizedImages(source: ImageSource): ImageSource {
  const reads = new PromiseCache<Uint8Array | undefined>();
  return {
    ...source,
    read: async (key) => (await reads.get(key, () => source.read(key))) as Uint8Array,
    tryRead: (key) => reads.get(key, () => source.tryRead(key)),
  };
}

export interface SentImage {
  readonly url: string;
  readonly width: number;
  readonly height: number;
}

export interface ImageRequest {
  readonly key: string;
  /** The box the role fits screenshots into; undefined: native size. */
  readonly box?: Size;
  readonly transport: 'data' | 'url';
  /** The screenshot's own size, when the caller knows it (the desktop's screen): what finds its variant without reading it. */
  readonly sourceSize?: Size;
}

const dataUrl = (png: Uint8Array): string => `data:image/png;base64,${Buffer.from(png).toString('base64')}`;

export class ImagePreparer {
  /** Images resized here because their variant was missing: should stay 0 on the hot path. */
  preparedHere = 0;

  constructor(
    /** The boxes hosts store variants for (config/schema.ts preparedBoxes). */
    private readonly boxes: readonly Size[],
    /** How long the source's signed URLs stay valid (storage.presignSeconds); one is reused for half that. */
    private readonly urlSeconds = 900,
    /** Images resized here, by content and box (the fallback only). */
    private readonly prepared = new PromiseCache<SentImage>(256),
    /** Variants known to exist (objects never change once written). */
    private readonly existing = new PromiseCache<boolean>(4096),
    /**
     * Images as sent, by key and transport: a screenshot is the planner's "current" one step and
     * its "previous" the next, so each is read (or signed) once. Signed URLs are kept for less
     * than their validity.
     */
    private readonly sent = new PromiseCache<SentImage & { readonly until: number }>(512),
  ) {}

  private prepares(box: Size | undefined): boolean {
    return box === undefined || this.boxes.some((b) => b.width === box.width && b.height === box.height);
  }

  async image(source: ImageSource, request: ImageRequest): Promise<SentImage> {
    const { key, box, transport, sourceSize } = request;
    if (sourceSize !== undefined && this.prepares(box)) {
      const chosen = keyFor(key, sourceSize, box);
      const size = fittedSize(sourceSize, box);
      const id = `${transport}:${chosen}`;
      const hit = await this.sent.get(id, () => this.send(source, chosen, key, size, transport));
      if (hit.until > Date.now()) return hit;
      this.sent.forget(id);
      return this.image(source, request);
    }
    return this.prepareHere(source, key, box);
  }

  /** A prepared image as sent: by URL when the server can fetch it and it exists, else inline; the fallback when it is missing. */
  private async send(source: ImageSource, chosen: string, key: string, size: Size, transport: 'data' | 'url'): Promise<SentImage & { until: number }> {
    if (transport === 'url' && source.url !== undefined && (chosen === key || (await this.existing.get(chosen, () => source.exists(chosen))))) {
      return { url: await source.url(chosen), ...size, until: Date.now() + this.urlSeconds * 500 };
    }
    const bytes = chosen === key ? await source.read(key) : await source.tryRead(chosen);
    const sent = bytes !== undefined ? { url: dataUrl(bytes), ...size } : await this.prepareHere(source, key, size);
    return { ...sent, until: Number.POSITIVE_INFINITY };
  }

  /** The fallback: the original fitted inside `box` here (a PNG that already fits goes as it is), cached by content. */
  private async prepareHere(source: ImageSource, key: string, box: Size | undefined): Promise<SentImage> {
    const original = Buffer.from(await source.read(key));
    const id = `${createHash('sha1').update(original).digest('hex')}:${box?.width}x${box?.height}`;
    return this.prepared.get(id, async () => {
      const { width = 0, height = 0, format } = await sharp(original).metadata();
      if (format === 'png' && (box === undefined || (width <= box.width && height <= box.height))) return { url: dataUrl(original), width, height };
      this.preparedHere += 1;
      let image = sharp(original);
      if (box !== undefined) image = image.resize({ width: box.width, height: box.height, fit: 'inside', withoutEnlargement: true });
      const { data, info } = await image.png({ compressionLevel: 3 }).toBuffer({ resolveWithObject: true });
      return { url: dataUrl(data), width: info.width, height: info.height };
    });
  }
}
