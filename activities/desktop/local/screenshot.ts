import sharp from 'sharp';
import { readRootImage, withRootImage, type Region, type RgbImage } from '../../../io/x11-image';
import { FAST_PNG } from '../../images/variants';

/** As long as ImageMagick's `import` was given: a shot of a stopped X server fails, it does not hang the step. */
const TIMEOUT_MS = 15_000;

/**
 * The whole X screen of `display` (`:N`) as PNG bytes: the root window's pixels read with X's
 * own GetImage request (io/x11-image.ts), encoded here by sharp as the screenshot's variants
 * are. The same pixels as ImageMagick's `import -window root` gave (a test compares them), for a
 * quarter of its CPU and no process per shot (docs/benchmarks.md, "Screenshots without a process
 * per shot").
 */
export async function captureScreen(display: string): Promise<Buffer> {
  const png = await withRootImage(display, TIMEOUT_MS, ({ width, height, rgb }) => sharp(rgb, { raw: { width, height, channels: 3 } }).png(FAST_PNG).toBuffer());
  if (png.length < 8 || png.readUInt32BE(0) !== 0x89504e47) throw new Error(`sharp returned ${png.length} bytes that are not a PNG`);
  return png;
}

/** The pixels of `region` of the screen of `display`, as RGB: for a driver that watches part of the screen. */
export function capturePixels(display: string, region: Region): Promise<RgbImage> {
  return readRootImage(display, TIMEOUT_MS, region);
}
