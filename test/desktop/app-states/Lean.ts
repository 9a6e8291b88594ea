import type { TaskState } from './types';

/**
 * What the agent leaves in /home/user/sci/Sci/Basic.lean: the proof that replaces the theorem's
 * `sorry`. The Lean double cannot elaborate it (no Lean toolchain here); it builds the proofs the
 * test lists as accepted, so each task's proof text is its own and the off one is a proof the
 * double rejects, as `lake build` rejects a wrong one.
 */
export interface LeanState {
  readonly proof: string;
}

const IDS = ['A-01', 'A-02', 'A-04', 'A-05', 'B-02', 'B-03', 'B-05', 'B-06', 'C-01', 'C-02', 'C-04', 'C-05', 'D-02', 'D-03', 'D-05', 'D-06', 'E-01', 'E-02'];

export const LEAN_STATES: Readonly<Record<string, TaskState<LeanState>>> = Object.fromEntries(
  IDS.map((id) => [id, { state: { proof: `exact proof_of_${id.replace('-', '_')}` }, off: { path: ['proof'], value: `exact wrong_${id.replace('-', '_')}` } }]),
);
