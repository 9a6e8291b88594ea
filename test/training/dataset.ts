import type { ObjectStore } from '../../activities/storage/object-store';
import type { Size } from '../../core/images';
import { datasetManifestKey, datasetPrefix, verdictKey } from '../../core/keys';
import { DATASET_SCHEMA, grpoRows, sftRows, type DatasetImage, type DatasetManifest } from '../../core/training';
import { SCREEN, type RecordedTrajectory } from '../../doubles/scripted-models/recorded-trajectory';

export { recordTrajectory, SCREEN, type RecordedTrajectory } from '../../doubles/scripted-models/recorded-trajectory';

/** Training data for the GPU-side tests: datasets of recorded trajectories, as the orchestrator's dataset builders write them. */

/** Every step of a trajectory that has an action: what a clean verdict makes positive. */
export const allSteps = (t: RecordedTrajectory): number[] => t.manifest.steps.filter((s) => s.action !== null).map((s) => s.index);

/** A GRPO (JSONL) or SFT (JSON list) dataset of the trajectories' steps, written to S3; its manifest key. */
export async function writeDataset(store: ObjectStore, prefix: string, id: string, kind: 'grpo' | 'sft', trajectories: readonly RecordedTrajectory[], plannerImage: Size): Promise<string> {
  const view = { screen: SCREEN, box: plannerImage };
  const built = trajectories.flatMap((t): Array<{ row: unknown; images: DatasetImage[] }> =>
    kind === 'grpo' ? grpoRows(t.manifest, t.manifestKey, allSteps(t), view) : sftRows(t.manifest, allSteps(t), view),
  );
  const data = kind === 'grpo' ? built.map((b) => JSON.stringify(b.row)).join('\n') + '\n' : JSON.stringify(built.map((b) => b.row));
  const dataKey = `${datasetPrefix(prefix, id)}/${kind === 'grpo' ? 'prompts.jsonl' : 'sft.json'}`;
  await store.put(dataKey, data, 'application/json');
  const images = new Map<string, DatasetImage>();
  for (const b of built) for (const image of b.images) images.set(image.key, image);
  let imageBytes = 0;
  for (const image of images.values()) imageBytes += (await store.get(image.key)).length;
  const manifest: DatasetManifest = {
    schema: DATASET_SCHEMA,
    id,
    kind,
    createdAt: new Date().toISOString(),
    software: ['KAlgebra'],
    dataKey,
    rows: built.length,
    images: [...images.values()],
    sources: trajectories.map((t) => ({
      manifestKey: t.manifestKey,
      verdictKey: verdictKey(prefix, { run: t.manifest.run, software: t.manifest.software, task: t.manifest.taskId, attempt: t.manifest.attempt }),
      software: t.manifest.software,
      steps: allSteps(t),
    })),
    bytes: { data: Buffer.byteLength(data), images: imageBytes },
  };
  const key = datasetManifestKey(prefix, id);
  await store.putJson(key, manifest);
  return key;
}
