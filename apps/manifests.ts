import { evaluationResultSchemaOf } from '../core/evaluation';
import { evaluatorTypesOf, initializeStepSchemaOf } from '../core/task';
import { taskSetManifestSchemaOf } from '../core/task-set';
import { trajectoryManifestSchemaOf, type TrajectoryManifest } from '../core/trajectory';
import { parseOrThrow } from '../core/validation';
import { APPS } from './index';

/**
 * The schemas of what the pipeline stores that name the applications' funcs and checks, built
 * once from the registry: core/ defines each for any list of apps, these are the ones every
 * reader and writer uses.
 */

/** A task's evaluation as stored: a check's type is one the registry's apps know. */
export const evaluationResultSchema = evaluationResultSchemaOf(evaluatorTypesOf(APPS));

export const trajectoryManifestSchema = trajectoryManifestSchemaOf(evaluationResultSchema);

/** Validates a manifest read back from storage; throws a ValidationError naming every bad field. */
export const parseTrajectoryManifest = (raw: unknown, source: string): TrajectoryManifest => parseOrThrow(trajectoryManifestSchema, raw, source);

/** A generated task set's manifest: its start steps are steps of the registry's apps. */
export const taskSetManifestSchema = taskSetManifestSchemaOf(initializeStepSchemaOf(APPS));
