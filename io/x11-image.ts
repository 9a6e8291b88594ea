import { connect, type Socket } from 'node:net';
import * as os from 'node:os';

/**
 * The root window's pixels straight from an X server, over its Unix socket, with the core
 * protocol's GetImage request: no process per shot (ImageMagick's `import` was one, 7.7% of the
 * learning loop's CPU) and no helper process to keep alive. Each shot opens its own connection
 * and closes it: the setup costs a few hundred microseconds against the image's 8 MB, and no
 * connection outlives a display that died or was replaced. The displays this is for (Xvfb,
 * started without -auth) accept local clients without authorization, as xprop and xdotool use
 * them. Protocol: X Window System Protocol, X11R7, sections 8 (connection setup) and 9 (GetImage).
 */

export interface RgbImage {
  readonly width: number;
  readonly height: number;
  /** width * height * 3 bytes, rows top to bottom, each pixel R, G, B. */
  readonly rgb: Buffer;
}

/** What the connection setup says about the first screen, enough to read its root window. */
interface Screen {
  readonly root: number;
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly bitsPerPixel: number;
  readonly scanlinePad: number;
  readonly lsbFirst: boolean;
  readonly masks: { readonly red: number; readonly green: number; readonly blue: number };
}

const GET_IMAGE = 73;
const Z_PIXMAP = 2;

/** `:N` (what DISPLAY holds) to the server's socket; only local displays are supported. */
export function displaySocket(display: string): string {
  const match = /^:(\d+)(?:\.\d+)?$/.exec(display);
  if (match === null) throw new Error(`DISPLAY must be a local display ":N", got ${JSON.stringify(display)}`);
  return `/tmp/.X11-unix/X${match[1]}`;
}

/** A rectangle of the screen, in pixels from its top left corner. */
export interface Region {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/**
 * The root window of `display`'s first screen as RGB, or only `region` of it (a part of the screen
 * a driver watches: a fraction of the bytes, and no PNG to encode and decode again); rejects after
 * `timeoutMs` if the server does not answer, and for a region not inside the screen.
 */
export function readRootImage(display: string, timeoutMs: number, region?: Region): Promise<RgbImage> {
  return readImage(display, timeoutMs, region, (pixels) => Buffer.allocUnsafe(pixels * 3));
}

/**
 * The whole screen lent to `use` in buffers kept for the next shot: its RGB bytes are only valid
 * until `use` settles. A screenshot's 8 MB reply and 6 MB of RGB were new memory outside V8's heap
 * at every shot, and that much new memory makes V8 collect its whole heap every few shots.
 */
export async function withRootImage<T>(display: string, timeoutMs: number, use: (image: RgbImage) => Promise<T>): Promise<T> {
  let lent: Buffer | undefined;
  try {
    const image = await readImage(display, timeoutMs, undefined, (pixels) => (lent = borrow(pixels * 3)).subarray(0, pixels * 3));
    return await use(image);
  } finally {
    if (lent !== undefined) giveBack(lent);
  }
}

async function readImage(display: string, timeoutMs: number, region: Region | undefined, output: (pixels: number) => Buffer): Promise<RgbImage> {
  const conversation = new Conversation(displaySocket(display), timeoutMs);
  try {
    const screen = parseSetup(await conversation.read(8, (head) => 8 + head.readUInt16LE(6) * 4));
    const area = region ?? { x: 0, y: 0, width: screen.width, height: screen.height };
    checkRegion(area, screen);
    conversation.write(getImageRequest(screen, area));
    const reply = await conversation.read(32, (head) => (head[0] === 1 ? 32 + head.readUInt32LE(4) * 4 : 32));
    if (reply[0] !== 1) throw new Error(`the X server refused GetImage: error code ${reply[1]}`);
    return toRgb(screen, area, reply.subarray(32), output);
  } catch (err) {
    throw new Error(`reading the screen of X display ${display}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    conversation.close();
  }
}

/** Large buffers of finished reads, for the next ones (a few: each desktop of a process reads one shot at a time). */
const spares: Buffer[] = [];
const MAX_SPARES = 8;

/** A buffer of at least `size` bytes: the smallest spare one large enough, or a new one. */
function borrow(size: number): Buffer {
  let best = -1;
  for (const [i, b] of spares.entries()) if (b.length >= size && (best < 0 || b.length < spares[best]!.length)) best = i;
  return best < 0 ? Buffer.allocUnsafe(size) : spares.splice(best, 1)[0]!;
}

function giveBack(buffer: Buffer): void {
  if (spares.length < MAX_SPARES) spares.push(buffer);
}

/**
 * One connection: bytes in order, each message read whole once its header says how long it is.
 * Node reads into one buffer of ours (`onread`) instead of a new one per chunk: a quarter of the
 * CPU for the 8 MB of an image, which arrives in some 40 reads of up to 1 MB.
 */
class Conversation {
  private readonly socket: Socket;
  /** Received bytes not yet taken are data[start, end). */
  private data = borrow(64 * 1024);
  private readonly chunks = borrow(1024 * 1024);
  private start = 0;
  private end = 0;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(path: string, timeoutMs: number) {
    this.socket = connect({ path, onread: { buffer: this.chunks, callback: (n, chunk) => this.received(chunk, n) } });
    this.timer = setTimeout(() => this.fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('the X server closed the connection')));
    // Setup request: little-endian ('l'), protocol 11.0, no authorization.
    this.write(Buffer.from([0x6c, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next message: `header` bytes, then as many as `length(header)` says in all. */
  async read(header: number, length: (head: Buffer) => number): Promise<Buffer> {
    const head = await this.take(header, false);
    return this.take(length(head), true);
  }

  /** Ends the connection; what it read is not to be used after this (its buffers go to the next reads). */
  close(): void {
    clearTimeout(this.timer);
    this.socket.destroy();
    giveBack(this.data);
    giveBack(this.chunks);
  }

  /** Keeps the `n` bytes Node read into `chunk` (it reads the next ones into the same buffer); true: keep reading. */
  private received(chunk: Uint8Array, n: number): boolean {
    this.room(this.end - this.start + n);
    this.data.set(chunk.subarray(0, n), this.end);
    this.end += n;
    this.wake?.();
    return true;
  }

  /** Room for `n` unread bytes from `start` on: the unread ones move to a larger buffer when they would not fit. */
  private room(n: number): void {
    if (this.start + n <= this.data.length) return;
    const larger = borrow(Math.max(n, this.data.length));
    this.data.copy(larger, 0, this.start, this.end);
    giveBack(this.data);
    this.end -= this.start;
    this.start = 0;
    this.data = larger;
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
  }

  /** Waits for `n` bytes; returns them, consumed or left in place for the next read. */
  private async take(n: number, consume: boolean): Promise<Buffer> {
    // A message's whole length is known before its bytes come: the buffer grows once.
    this.room(n);
    while (this.end - this.start < n) {
      if (this.failure !== undefined) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    const bytes = this.data.subarray(this.start, this.start + n);
    if (consume) this.start += n;
    return bytes;
  }
}

/** The first screen's root window, its pixel format and its visual's colour masks, from the setup reply. */
function parseSetup(reply: Buffer): Screen {
  if (reply[0] !== 1) {
    const reason = reply[0] === 0 ? reply.toString('latin1', 8, 8 + (reply[1] ?? 0)) : 'it asks for authorization';
    throw new Error(`the X server refused the connection: ${reason}`);
  }
  const vendorLength = reply.readUInt16LE(24);
  const formatCount = reply[29] ?? 0;
  const lsbFirst = reply[30] === 0;
  const formats = 40 + pad4(vendorLength);
  const screen = formats + formatCount * 8;
  const root = reply.readUInt32LE(screen);
  const width = reply.readUInt16LE(screen + 20);
  const height = reply.readUInt16LE(screen + 22);
  const rootVisual = reply.readUInt32LE(screen + 32);
  const depth = reply[screen + 38] ?? 0;
  let format: { bitsPerPixel: number; scanlinePad: number } | undefined;
  for (let at = formats; at < screen; at += 8) {
    if (reply[at] === depth) format = { bitsPerPixel: reply[at + 1] ?? 0, scanlinePad: reply[at + 2] ?? 0 };
  }
  const masks = visualMasks(reply, screen + 40, reply[screen + 39] ?? 0, rootVisual);
  if (format === undefined || masks === undefined) throw new Error(`the setup reply has no pixel format or visual for the root window (depth ${depth})`);
  return { root, width, height, depth, ...format, lsbFirst, masks };
}

/** The colour masks of visual `id`, from the screen's list of depths and their visuals. */
function visualMasks(reply: Buffer, from: number, depthCount: number, id: number): Screen['masks'] | undefined {
  let at = from;
  for (let d = 0; d < depthCount; d += 1) {
    const visuals = reply.readUInt16LE(at + 2);
    at += 8;
    for (let v = 0; v < visuals; v += 1, at += 24) {
      if (reply.readUInt32LE(at) === id) return { red: reply.readUInt32LE(at + 8), green: reply.readUInt32LE(at + 12), blue: reply.readUInt32LE(at + 16) };
    }
  }
  return undefined;
}

function checkRegion(r: Region, screen: Screen): void {
  const whole = [r.x, r.y, r.width, r.height].every(Number.isInteger);
  if (!whole || r.x < 0 || r.y < 0 || r.width <= 0 || r.height <= 0 || r.x + r.width > screen.width || r.y + r.height > screen.height) {
    throw new Error(`region ${JSON.stringify(r)} is not a non-empty rectangle of whole pixels inside the ${screen.width}x${screen.height} screen`);
  }
}

function getImageRequest(screen: Screen, region: Region): Buffer {
  const request = Buffer.alloc(20);
  request[0] = GET_IMAGE;
  request[1] = Z_PIXMAP;
  request.writeUInt16LE(5, 2);
  request.writeUInt32LE(screen.root, 4);
  request.writeInt16LE(region.x, 8);
  request.writeInt16LE(region.y, 10);
  request.writeUInt16LE(region.width, 12);
  request.writeUInt16LE(region.height, 14);
  request.writeUInt32LE(0xffffffff, 16);
  return request;
}

/**
 * ZPixmap data to packed RGB. Only the format of a 24-bit TrueColor screen (Xvfb's `x24`) in
 * this machine's byte order: 32 bits a pixel, each colour one byte of the pixel's word where
 * its mask says, rows with no padding.
 */
function toRgb(screen: Screen, { width, height }: Region, data: Buffer, output: (pixels: number) => Buffer): RgbImage {
  const { bitsPerPixel, scanlinePad, masks } = screen;
  const shifts = [masks.red, masks.green, masks.blue].map(byteShift);
  const native = screen.lsbFirst === (os.endianness() === 'LE');
  if (bitsPerPixel !== 32 || scanlinePad !== 32 || !native || shifts.some((s) => s === undefined)) {
    const format = `${bitsPerPixel} bits a pixel, scanline pad ${scanlinePad}, ${screen.lsbFirst ? 'LSB' : 'MSB'} first, masks ${[masks.red, masks.green, masks.blue].map((m) => m.toString(16)).join('/')}`;
    throw new Error(`unsupported pixel format: ${format} (expected a 24-bit TrueColor screen in this machine's byte order)`);
  }
  const pixels = width * height;
  if (data.length < pixels * 4) throw new Error(`GetImage returned ${data.length} bytes for ${width}x${height}`);
  // Whole 32-bit words: half the time of picking bytes one by one.
  const aligned = data.byteOffset % 4 === 0 ? data : Buffer.from(data);
  const words = new Uint32Array(aligned.buffer, aligned.byteOffset, pixels);
  const [r, g, b] = shifts as [number, number, number];
  const rgb = output(pixels);
  const done = r === 16 && g === 8 && b === 0 && rgb.byteOffset % 4 === 0 && os.endianness() === 'LE' ? packXrgb(words, rgb) : 0;
  for (let i = done, out = done * 3; i < pixels; i += 1, out += 3) {
    const word = words[i]!;
    rgb[out] = (word >>> r) & 0xff;
    rgb[out + 1] = (word >>> g) & 0xff;
    rgb[out + 2] = (word >>> b) & 0xff;
  }
  return { width, height, rgb };
}

/**
 * The usual layout (red in bits 16-23, green 8-15, blue 0-7; Xvfb's) four pixels at a time: the
 * 12 bytes of their RGB written as three little-endian 32-bit words, in about half the time of 12 byte writes.
 * Returns how many pixels it packed (the rest, fewer than four, are left to the caller).
 */
function packXrgb(words: Uint32Array, rgb: Buffer): number {
  const out = new Uint32Array(rgb.buffer, rgb.byteOffset, Math.floor(rgb.length / 4));
  const whole = words.length - (words.length % 4);
  const swap = (w: number): number => ((w >>> 16) & 0xff) | (w & 0xff00) | ((w & 0xff) << 16);
  for (let i = 0, o = 0; i < whole; i += 4, o += 3) {
    const p0 = swap(words[i]!);
    const p1 = swap(words[i + 1]!);
    const p2 = swap(words[i + 2]!);
    const p3 = swap(words[i + 3]!);
    out[o] = p0 | (p1 << 24);
    out[o + 1] = (p1 >>> 8) | (p2 << 16);
    out[o + 2] = (p2 >>> 16) | (p3 << 8);
  }
  return whole;
}

/** How far a one-byte colour mask is from the word's low end, in bits; undefined for other masks. */
function byteShift(mask: number): number | undefined {
  const index = [0xff, 0xff00, 0xff0000, 0xff000000].indexOf(mask >>> 0);
  return index < 0 ? undefined : index * 8;
}

const pad4 = (n: number): number => (n + 3) & ~3;
