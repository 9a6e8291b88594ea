import { z } from 'zod';
import { readAtspiState, readerScript, type StateReaderOptions } from '../../../io/atspi';

/** KAlgebra's state as its accessibility tree shows it (kalgebra_state.py). */

const box = { x: z.number(), y: z.number(), width: z.number(), height: z.number() };
const widget = z.object({ text: z.string().nullable(), showing: z.boolean(), ...box });
const tabBar = z.object({ current: z.string(), tabs: z.array(z.object({ name: z.string(), ...box })) });

export const kalgebraStateSchema = z.discriminatedUnion('app', [
  z.object({ app: z.literal(false) }),
  z.object({
    app: z.literal(true),
    window: z.object(box),
    mainTabs: tabBar.nullable(),
    calculatorInput: widget.nullable(),
    /** The calculator's log, oldest first: executed lines with their printed results, and messages. */
    console: z.array(z.union([z.object({ input: z.string(), result: z.string() }), z.object({ message: z.string() })])),
    /** The 3D Graph tab's expression field. */
    input3d: widget.nullable(),
    /** Where the 3D plot is drawn, while the 3D Graph tab shows. */
    view3d: z.object(box).nullable(),
    /** The checked style of the 3D Graph menu (Dots, Lines, Solid). */
    plotStyle3d: z.string().nullable(),
    /** The checked resolution of the 2D Graph menu (Poor, Normal, Fine, Very Fine). */
    resolution2d: z.string().nullable(),
    /** The Variables dock: real numbers at full precision (a complex shows its real part only). */
    variables: z.array(z.object({ name: z.string(), value: z.string() })),
    /** The 2D Graph's function list; `shown` is the row's check box. */
    functions: z.array(z.object({ name: z.string(), expression: z.string(), shown: z.boolean() })),
    functionsDockTabs: tabBar.nullable(),
    /** The expression field of the function list's Add tab. */
    functionEditor: widget.nullable(),
    statusBar: z.string(),
  }),
]);

export type KAlgebraState = z.output<typeof kalgebraStateSchema>;
export type RunningKAlgebraState = Extract<KAlgebraState, { app: true }>;
export type ConsoleEntry = RunningKAlgebraState['console'][number];

const STATE_SCRIPT = readerScript(__dirname, 'kalgebra_state.py');

/** Reads KAlgebra's state from the accessibility tree; throws when the bus or the app does not answer in time. */
export const readKAlgebraState = (options: StateReaderOptions): Promise<KAlgebraState> => readAtspiState(STATE_SCRIPT, kalgebraStateSchema, options);

const viewSchema = z.discriminatedUnion('app', [
  z.object({ app: z.literal(false) }),
  z.object({ app: z.literal(true), window: z.object(box), mainTabs: tabBar.nullable(), calculatorInput: widget.nullable(), view3d: z.object(box).nullable() }),
]);
export type KAlgebraView = z.output<typeof viewSchema>;

/** Only the window, which tab shows, the calculator's field and where the 3D plot is (a few times faster than readKAlgebraState). */
export const readKAlgebraView = (options: StateReaderOptions): Promise<KAlgebraView> => readAtspiState(STATE_SCRIPT, viewSchema, options, ['--view']);
