/**
 * Text for a terminal. Task files, model replies and S3 objects end up in what the CLI prints (a
 * task's func name in `coda tasks`, a failure in `coda history`, a report's Markdown), and a
 * terminal obeys the control characters in them: ESC and C1 sequences can rewrite the screen, set
 * the window title, or write to the clipboard. Every control character but newline and tab is
 * printed as a `\uXXXX` escape, which keeps JSON output valid and meaning the same.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export const forTerminal = (text: string): string => text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
