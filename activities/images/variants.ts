import sharp from 'sharp';
import { fittedSize, variantKey, type Size } from '../../core/images';
import type { ObjectStore } from '../storage/object-store';

/**
 * How every PNG this host makes is encoded: zlib level 3, no row filters. For a 1920x1080
 * screen as fast as level 1 (about 8 ms) and half its size, like ImageMagick's level 1 with
 * the sub filter that the screenshots had before.
 */
export const FAST_PNG = { compressionLevel: 3, adaptiveFiltering: false } as const;

export interface Variant {
  readonly key: string;
  readonly png: Buffer;
  readonly size: Size;
}

/**
 * The variants of a freshly captured screenshot for the boxes the deployment's roles fit
 * screenshots into (config/schema.ts preparedBoxes): decoded once, resized to the exact size
 * core/images.ts fittedSize gives, PNG-encoded quickly (FAST_PNG). Boxes the screenshot already fits need
 * none (readers use the original).
 */
export async function makeVariants(key: string, png: Buffer, boxes: readonly Size[]): Promise<Variant[]> {
  if (boxes.length === 0) return [];
  const image = sharp(png);
  const { width = 0, height = 0 } = await image.metadata();
  const wanted = boxes.flatMap((box) => {
    const size = fittedSize({ width, height }, box);
    return size.width === width && size.height === height ? [] : [{ box, size }];
  });
  if (wanted.length === 0) return [];
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return Promise.all(
    wanted.map(async ({ box, size }) => ({
      key: variantKey(key, box),
      size,
      png: await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
        .resize({ width: size.width, height: size.height, fit: 'fill' })
        .png(FAST_PNG)
        .toBuffer(),
    })),
  );
}

/** Stores a screenshot at `key` and its variants for `boxes` beside it: the original uploads while its variants are made, the variants once made. */
export async function storeScreenshot(store: ObjectStore, key: string, png: Buffer, boxes: readonly Size[]): Promise<void> {
  await Promise.all([store.put(key, png, 'image/png'), makeVariants(key, png, boxes).then((variants) => Promise.all(variants.map((v) => store.put(v.key, v.png, 'image/png'))))]);
}
