import { z } from 'zod';
import { readAtspiState, readerScript, type StateReaderOptions } from '../../../io/atspi';

/** TeXstudio's main window as its accessibility tree shows it (texstudio_state.py). */

const box = { x: z.number(), y: z.number(), width: z.number(), height: z.number() };

export const texstudioStateSchema = z.discriminatedUnion('app', [
  z.object({ app: z.literal(false) }),
  z.object({
    app: z.literal(true),
    window: z.object(box),
    /** `<path of the current document> - TeXstudio`. */
    title: z.string(),
    /** The editor's document tabs; null before any document is open. */
    documents: z.object({ current: z.string(), tabs: z.array(z.object({ name: z.string(), ...box })) }).nullable(),
  }),
]);

export type TeXstudioState = z.output<typeof texstudioStateSchema>;
export type RunningTeXstudioState = Extract<TeXstudioState, { app: true }>;

const STATE_SCRIPT = readerScript(__dirname, 'texstudio_state.py');

/** Reads TeXstudio's window from the accessibility tree; throws when the bus or the app does not answer in time. */
export const readTeXstudioState = (options: StateReaderOptions): Promise<TeXstudioState> => readAtspiState(STATE_SCRIPT, texstudioStateSchema, options);
