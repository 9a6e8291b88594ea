/**
 * Text for a terminal. Task files, model replies and S3 objects end up in what the CLI prints (a
 * task's func name in `coda tasks`, a failure in `coda history`, a report's Markdown), and
 * workflow ids and search attributes from Temporal in `coda runs`: a terminal obeys the control
 * characters in them (ESC and C1 sequences can rewrite the screen, set the window title, or write
 * to the clipboard), and it shows format characters (Unicode category Cf) by their effect, not as
 * themselves: a right-to-left override (U+202E) or isolate turns what follows around, a zero-width
 * space or joiner makes two names look alike. Every control character but newline and tab, and
 * every format character, is printed as `\uXXXX` escapes (a character beyond U+FFFF as its two
 * UTF-16 halves, as JSON writes it), which keeps JSON output valid and meaning the same.
 */
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\p{Cf}/gu;

const escape = (c: string): string => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

export const forTerminal = (text: string): string => text.replace(HIDDEN, escape);
