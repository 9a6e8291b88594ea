/**
 * HTML from template literals: every interpolated value is escaped unless it is Html already, so
 * texts from S3 and Temporal (model replies, task instructions, failure messages) stay text.
 * Arrays are joined; undefined, null and false render as nothing.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const piece = (value: unknown): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(piece).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
};

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => (out += piece(value) + (strings[i + 1] ?? '')));
  return new Html(out);
}
