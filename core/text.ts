/** `text` cut to at most `max` characters, an ellipsis marking the cut: for texts kept in histories and messages. */
export const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
