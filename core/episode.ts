/**
 * How an episode ends. Kept apart from the zod schemas of actions.ts so that workflow code, which
 * needs these few lines, does not load zod into every workflow it starts; it reads an action by its
 * `type` alone, so that actions.ts (which takes STOP_REASONS from here) is not imported back.
 */

/** An action as far as ending an episode goes: GuiAction (core/actions.ts) is one. */
interface Typed {
  readonly type: string;
}

/** How an episode ended (ScienceBoard's stop primitives, plus call_user, TIMEOUT and ERROR). */
export const STOP_REASONS = ['DONE', 'FAIL', 'ANS', 'CALL_USER', 'TIMEOUT', 'ERROR'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** The stop reason of an action that ends the episode; undefined for one that touches the screen. */
export function stopReasonOf<A extends Typed>(action: A): StopReason | undefined {
  switch (action.type) {
    case 'done':
      return 'DONE';
    case 'fail':
      return 'FAIL';
    case 'answer':
      return 'ANS';
    case 'call_user':
      return 'CALL_USER';
    default:
      return undefined;
  }
}

/** Actions that end an episode instead of touching the screen. */
export const isTerminal = <A extends Typed>(action: A): boolean => stopReasonOf(action) !== undefined;
