import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RgbImage } from '../../../io/x11-image';

/**
 * Whether KAlgebra drew a new 3D surface, seen on the screen. Its 3D view is OpenGL, outside the
 * accessibility tree, and the stock app says nothing when a plot succeeds (a refused one leaves
 * "Errors: ..." in the status bar, which a later success does not clear): a new surface is a
 * new set of surface-coloured pixels in the view's box. KAlgebra shades its surface in yellow
 * (kalgebra.cpp, Qt::yellow); the axes are red, green and blue, the grid grey, and the pale
 * tooltip the expression field shows over the view is not yellow enough to count.
 */

/** A fingerprint of where the surface is drawn in the view's pixels: equal fingerprints, same surface. */
export function viewPrint({ width, height, rgb }: RgbImage): string {
  const mask = Buffer.alloc(Math.ceil((width * height) / 8));
  for (let p = 0, i = 0; i < rgb.length; p++, i += 3) {
    if (surfaceColoured(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!)) mask[p >> 3]! |= 1 << (p & 7);
  }
  return createHash('sha1').update(mask).digest('hex');
}

/** Shaded yellow: red and green alike and well above blue. */
const surfaceColoured = (r: number, g: number, b: number): boolean => r > 80 && g > 80 && Math.abs(r - g) < 40 && b < 0.6 * Math.min(r, g);

/**
 * After an input, whether the picture changed from `before`: it must change within `startMs`, and
 * is then given until `settleMs` to stop changing. KAlgebra plots as it handles the key, but its
 * software OpenGL on a loaded 2-core machine was seen to start drawing after more than 2 s, which
 * then read as "not plotted" by chance (KAlgebra A-03's reference plan failed 1 run in 4); only an
 * Enter that plots nothing (a refused expression) waits the whole `startMs`.
 */
export async function viewChanged(grab: () => Promise<string>, before: string, startMs = 10_000, settleMs = 15_000): Promise<boolean> {
  const started = Date.now();
  let last = await grab();
  while (last === before) {
    if (Date.now() - started > startMs) return false;
    await sleep(150);
    last = await grab();
  }
  for (;;) {
    await sleep(150);
    const next = await grab();
    if (next === last || Date.now() - started > settleMs) return true;
    last = next;
  }
}
