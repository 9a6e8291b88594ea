import type { Config } from '../config/schema';
import type { AttemptRef } from '../core/keys';

/** The viewer's pages, by what they show. Segments are encoded; S3 keys keep their slashes. */
const seg = encodeURIComponent;

export const paths = {
  runs: (filters: Readonly<Record<string, string>> = {}): string => {
    const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== '')).toString();
    return `/runs${query === '' ? '' : `?${query}`}`;
  },
  run: (workflowId: string): string => `/runs/${seg(workflowId)}`,
  runProgress: (workflowId: string): string => `/runs/${seg(workflowId)}/progress`,
  trajectories: (run: string, software: string): string => `/trajectories/${seg(run)}/${seg(software)}`,
  trajectory: (ref: AttemptRef): string => `/trajectories/${seg(ref.run)}/${seg(ref.software)}/${seg(ref.task)}/${ref.attempt}`,
  evaluation: (series?: string, report?: string): string => ['/evaluation', series, report].filter((p) => p !== undefined).map((p, i) => (i === 0 ? p : seg(p as string))).join('/'),
  training: (workflowId?: string): string => (workflowId === undefined ? '/training' : `/training/${seg(workflowId)}`),
  checkpoint: (name: string): string => `/checkpoints/${seg(name)}`,
  judge: (id?: string): string => (id === undefined ? '/judge' : `/judge/${seg(id)}`),
  object: (key: string): string => `/objects/${key.split('/').map(seg).join('/')}`,
};

/** The page of the report stored at `key` (`…reports/{series}/{id}.json`), or undefined for another key. */
export function reportPath(key: string): string | undefined {
  const match = /(?:^|\/)reports\/([^/]+)\/([^/]+)\.json$/.exec(key);
  return match === null ? undefined : paths.evaluation(match[1], match[2]);
}

/** Where a viewer listens: temporal.yaml `viewer`'s host and port. */
type Listening = { readonly viewer: Pick<Config['viewer'], 'host' | 'port'> };

/** Where the deployment's viewer answers (temporal.yaml `viewer`). */
export function viewerUrl(config: Listening): string {
  const host = config.viewer.host === '0.0.0.0' ? '127.0.0.1' : config.viewer.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.viewer.port}`;
}

/** The viewer's page of one workflow (what `npm run demo` prints last). */
export const runPageUrl = (config: Listening, workflowId: string): string => `${viewerUrl(config)}${paths.run(workflowId)}`;

/** The viewer's page of a report: its chart and its table (what `npm run demo` prints at the end). */
export const reportPageUrl = (config: Listening, reportKey: string): string => `${viewerUrl(config)}${reportPath(reportKey) ?? paths.evaluation()}`;
