/**
 * Screenshots and their prepared variants (issue 13: pixels are prepared once, where they are
 * captured). A role that sees screenshots fitted inside a box (the planner's 1280x720, the judge's
 * low and high resolutions) reads the variant stored beside the original at capture time, keyed
 * by that box, so nothing downstream decodes or resizes an image; and the size of a variant is
 * known from the original's size and the box alone, without reading it.
 */

export interface Size {
  readonly width: number;
  readonly height: number;
}

/**
 * The size of an `original` image fitted inside `box` without enlarging it, aspect kept (each side
 * rounded, at least 1). An image that already fits keeps its size.
 */
export function fittedSize(original: Size, box?: Size): Size {
  if (box === undefined || (original.width <= box.width && original.height <= box.height)) return original;
  const scale = Math.min(box.width / original.width, box.height / original.height);
  return { width: Math.max(1, Math.round(original.width * scale)), height: Math.max(1, Math.round(original.height * scale)) };
}

/** Where the variant of screenshot `key` for `box` is stored: beside it, named after the box. */
export const variantKey = (key: string, box: Size): string => `${key.replace(/\.png$/, '')}@${box.width}x${box.height}.png`;

/**
 * The key a role fitting screenshots inside `box` reads: the original when it already fits (or
 * there is no box), else its variant.
 */
export function keyFor(key: string, original: Size, box?: Size): string {
  const fitted = fittedSize(original, box);
  return box === undefined || (fitted.width === original.width && fitted.height === original.height) ? key : variantKey(key, box);
}

/** Width and height from a PNG's IHDR chunk (its first 24 bytes); undefined when it is not a PNG. */
export function pngSize(head: Uint8Array): Size | undefined {
  if (head.length < 24 || head[0] !== 0x89 || head[1] !== 0x50 || head[2] !== 0x4e || head[3] !== 0x47) return undefined;
  const word = (at: number): number => ((head[at] as number) * 2 ** 24 + ((head[at + 1] as number) << 16) + ((head[at + 2] as number) << 8) + (head[at + 3] as number));
  return { width: word(16), height: word(20) };
}
