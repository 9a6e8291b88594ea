import { checkpointManifestSchema, type CheckpointManifest } from '../../core/training';
import { html, type Html } from '../html';
import { check, type ViewerSources } from '../sources';
import { ViewerError } from '../errors';
import { paths } from '../urls';
import { badge, link, table, utc } from './parts';

/**
 * A checkpoint's lineage: the checkpoint and its ancestors (parents are manifest keys), each with
 * what it grew from, the dataset and trajectories it was trained on, and its trainer's figures.
 * The training page, a checkpoint's page and a training run's page show it.
 */

/** A checkpoint manifest, or what is wrong with it; undefined when there is none (the base planner). */
export type Checkpoint = { name: string; key: string; manifest?: CheckpointManifest; damage?: string };

export async function readCheckpoint(src: ViewerSources, key: string, name: string): Promise<Checkpoint> {
  try {
    const raw = await src.optionalJson(key, `checkpoint ${name}`);
    return raw === undefined ? { name, key } : { name, key, manifest: check(checkpointManifestSchema, raw, `checkpoint ${name}`, src.uri(key)) };
  } catch (err) {
    if (err instanceof ViewerError && err.status === 422) return { name, key, damage: [err.message, ...err.details].join(' ') };
    throw err;
  }
}

/** The checkpoint and its ancestors, newest first (parents are manifest keys). */
export async function lineage(src: ViewerSources, first: Checkpoint): Promise<Checkpoint[]> {
  const chain = [first];
  for (let current = first; current.manifest?.parent !== undefined && chain.length < 50; ) {
    const key = current.manifest.parent;
    current = await readCheckpoint(src, key, key.split('/').at(-2) ?? key);
    chain.push(current);
  }
  return chain;
}

/** A trainer's figure as people read it: integers whole, the rest to four significant digits. */
export const formatNumber = (v: number): string => (Number.isInteger(v) ? String(v) : v.toPrecision(4));

export function lineageTable(chain: readonly Checkpoint[], id = 'lineage'): Html {
  if (chain.length === 0) return html`<p class="muted">No trained checkpoint yet: the planner is the base planner.</p>`;
  return table(
    ['checkpoint', 'kind', 'created (UTC)', 'from', 'dataset', 'steps', 'figures', 'weights'],
    chain.map((c) =>
      c.manifest === undefined
        ? [link(paths.checkpoint(c.name), c.name), c.damage === undefined ? 'no manifest' : badge('damaged', 'failed'), '', '', c.damage ?? '', '', '', '']
        : [
            link(paths.checkpoint(c.manifest.name), c.manifest.name),
            c.manifest.kind,
            utc(c.manifest.createdAt),
            c.manifest.parent === undefined ? `base ${c.manifest.base.model}` : c.manifest.parent.split('/').at(-2),
            link(paths.object(c.manifest.dataset), `${c.manifest.sources.length} trajectories`),
            c.manifest.steps,
            Object.entries(c.manifest.metrics).map(([k, v]) => `${k} ${formatNumber(v)}`).join(', '),
            `${c.manifest.lora ? 'LoRA adapter' : 'full'}${c.manifest.double ? ' (trainer double: unchanged planner)' : ''}`,
          ],
    ),
    { id },
  );
}

