import assert from 'node:assert/strict';

/** Reading a Prometheus endpoint in the metrics tests (test/metrics/, test/unit/metrics/). */

/** One scrape: every sample by name, with its labels. */
export type Scrape = Array<{ name: string; labels: Record<string, string>; value: number }>;

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return (await response.text())
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [, name, labels, value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line) ?? [];
      return { name: name!, labels: Object.fromEntries([...(labels ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!])), value: Number(value) };
    });
}

/** The sum of the samples of `name` whose labels include `labels`. */
export const total = (samples: Scrape, name: string, labels: Record<string, string> = {}): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
