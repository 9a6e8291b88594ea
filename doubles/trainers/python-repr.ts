/**
 * TEST DOUBLE support: values printed as Python prints them, so the doubles' logs read like the
 * real trainers' (OpenRLHF logs a dict with str(); LLaMA-Factory writes json.dumps lines).
 * Floats follow Python's repr: the shortest text that reads back, exponent form below 1e-4 and
 * from 1e16 (`1e-06`, two-digit exponents), `.0` on whole numbers, `nan`, `inf`.
 */

export type PyValue = number | string | boolean | null | { readonly int: number };

/** Python's repr of a float. */
export function pyFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(value);
  if (magnitude < 1e-4 || magnitude >= 1e16) {
    const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
    const sign = exponent.startsWith('-') ? '-' : '+';
    const digits = exponent.replace(/^[-+]/, '').padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  const text = String(value);
  return text.includes('.') ? text : `${text}.0`;
}

const pyString = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

/** A Python int is written as `{ int: n }` (plain numbers are floats). */
const pyScalar = (value: PyValue): string => {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number') return pyFloat(value);
  return String(value.int);
};

/** str() of a flat dict. */
export const pyDict = (record: Readonly<Record<string, PyValue>>): string => `{${Object.entries(record).map(([k, v]) => `${pyString(k)}: ${pyScalar(v)}`).join(', ')}}`;

/** json.dumps() of a flat dict: Python's separators and float reprs (`NaN`, `Infinity` for non-finite). */
export const pyJsonDumps = (record: Readonly<Record<string, PyValue>>): string =>
  `{${Object.entries(record)
    .map(([k, v]) => {
      const text = typeof v === 'number' ? (Number.isNaN(v) ? 'NaN' : Number.isFinite(v) ? pyFloat(v) : v > 0 ? 'Infinity' : '-Infinity') : v !== null && typeof v === 'object' ? String(v.int) : JSON.stringify(v);
      return `${JSON.stringify(k)}: ${text}`;
    })
    .join(', ')}}`;
