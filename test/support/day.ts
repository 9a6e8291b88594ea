/**
 * The local day, for checks that compare a file's date with Python's `datetime.today()` at
 * evaluation (ScienceBoard's ChimeraX D-03). A test that writes the day and evaluates it later
 * must not straddle midnight: it waits out the day's last minutes first (`clearOfMidnight`).
 */

/** The day as Python's datetime.today() prints it here (%Y-%m-%d, local time). */
export function pythonToday(now = new Date()): string {
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
}

/** How long to wait before writing the day: none, or, within `marginMs` of local midnight, until a second after it. */
export function midnightWaitMs(now: Date, marginMs: number): number {
  const left = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1).getTime() - now.getTime();
  return left < marginMs ? left + 1000 : 0;
}

/** Resolves at once, or just after midnight when it is closer than `marginMs` (longer than the test takes from writing the day to evaluating it). */
export async function clearOfMidnight(marginMs: number): Promise<void> {
  const wait = midnightWaitMs(new Date(), marginMs);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
