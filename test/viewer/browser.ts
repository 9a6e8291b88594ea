import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { REPO_CONFIG } from '../stack';

/** Debian's Chromium (infra/install.sh installs it); playwright-core never downloads a browser. */
const CHROMIUM = '/usr/bin/chromium';

/** Where browser tests leave their screenshots (ignored by git; the README's comes from here). */
export const ARTIFACTS = path.join(path.dirname(REPO_CONFIG), 'test-artifacts', 'viewer');

/** The screenshots the README and docs/viewer.md show, retaken by every run of the browser tests (committed). */
export const DOC_IMAGES = path.join(path.dirname(REPO_CONFIG), 'docs', 'images');

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile. Background networking is off: this machine's network is
 * closed, and Chromium's own calls home would otherwise fail by the dozen at every start.
 */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  mkdirSync(DOC_IMAGES, { recursive: true });
  const profile = mkdtempSync(path.join(tmpdir(), 'coda-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
