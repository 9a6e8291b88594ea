import type { ReferencePlan } from '../core/policies/plans';
import type { Size } from '../core/smart-resize';
import type { Task } from '../core/task';
import type { AppSchema } from '../core/task-common';
import type { Template } from './seeds';
import type { VmApp } from './vm-app';

/**
 * All that the pipeline knows of one application, as its folder's index.ts exports it and the
 * registry (apps/index.ts) lists it: the tables that dispatch by software (task schemas, reference
 * policies, generator seeds, VM clients) are all read from these modules, so an application is
 * its folder and one registry line (docs/adding-an-application.md).
 */
export interface AppModule {
  /** Its task files' funcs and checks, names and launch commands (schema.ts). */
  readonly schema: AppSchema;
  /** The plan that carries out a task's reference solution, and a perturbed one its checks must fail (reference.ts). */
  readonly policy: Policy;
  /** The scripted task-generator double's templates for it (seeds.ts). */
  readonly seeds: readonly Template[];
  /** How a ScienceBoard VM runs its funcs and reads its state through its own server (vm.ts); absent when the VM server's own routes do. */
  readonly vm?: VmApp;
  /** What the project's VM image (infra/vm-image) holds for it; absent when the image does not run it. */
  readonly vmImage?: VmImageNeeds;
}

export interface VmImageNeeds {
  /** The Debian 12 packages it runs on. */
  readonly debianPackages: readonly string[];
  /** Folders of ScienceBoard's VM snapshot its tasks write into, made empty in the image (owned by the VM's user). */
  readonly folders?: readonly string[];
}

export interface Policy {
  referencePlan(task: Task, screen: Size): ReferencePlan;
  perturbedPlan(task: Task, screen: Size): ReferencePlan;
}
