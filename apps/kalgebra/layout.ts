import type { Point } from '../../core/actions';
import type { Size } from '../../core/smart-resize';

/**
 * Where KAlgebra 22.12's controls are on a local desktop, whose window is always maximized and
 * undecorated. Measured from the accessibility tree (AT-SPI Component.getExtents, desktop
 * coordinates) at 1920x1080 and again at 1280x800: every control keeps a fixed distance to one
 * corner of the screen (Qt lays out docks and tab bars at their natural size), so each point is
 * stored with the corner it hangs from rather than scaled.
 *
 *   control                    box at 1920x1080       box at 1280x800
 *   calculator input           (11,1015) 1636x32      (11,735) 996x32
 *   3D Graph input             (11,1015) 1898x32      (11,735) 1258x32
 *   Functions dock "Add" tab   (1682,1029) 51x29      (1042,749) 51x29
 *   function editor (Add tab)  (1638,45) 278x32       (998,45) 278x32
 *
 * The inputs are clicked near their left end, which both screens share.
 */

interface Anchored {
  readonly x: number;
  readonly fromRight?: boolean;
  readonly y: number;
  readonly fromBottom?: boolean;
}

const CONTROLS = {
  calculatorInput: { x: 100, y: 49, fromBottom: true },
  graph3dInput: { x: 100, y: 49, fromBottom: true },
  functionsAddTab: { x: 213, fromRight: true, y: 37, fromBottom: true },
  functionEditor: { x: 143, fromRight: true, y: 61 },
} as const satisfies Record<string, Anchored>;

export type KAlgebraControl = keyof typeof CONTROLS;

export function kalgebraPoint(control: KAlgebraControl, screen: Size): Point {
  const c: Anchored = CONTROLS[control];
  return { x: c.fromRight ? screen.width - c.x : c.x, y: c.fromBottom ? screen.height - c.y : c.y };
}

/**
 * The mnemonics of the Calculator, 2D Graph and 3D Graph tabs (ScienceBoard's tab index 0-2).
 * Switching with them also focuses the tab's input (in 2D, when the function list is empty).
 */
export const KALGEBRA_TAB_HOTKEYS = [
  ['alt', 'c'],
  ['alt', '2'],
  ['alt', '3'],
] as const;
