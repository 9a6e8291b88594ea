/**
 * What a page can fail with, each shown as a page of its own with its HTTP status: something that
 * does not exist (404, naming it), data that exists but is damaged (422, naming each problem),
 * S3 or Temporal not answering (503, naming which), a bad filter (400).
 */
export class ViewerError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    /** Bad fields, or the raw text of a damaged object (the start of it). */
    readonly details: readonly string[] = [],
  ) {
    super(message);
    this.name = 'ViewerError';
  }
}

export const notFound = (what: string, why: string): ViewerError => new ViewerError(404, `Not found: ${what}`, why);

export const badRequest = (what: string, why: string): ViewerError => new ViewerError(400, `Bad request: ${what}`, why);

export const damaged = (what: string, where: string, problems: readonly string[]): ViewerError =>
  new ViewerError(422, `Damaged: ${what}`, `${where} cannot be shown as it is:`, problems);

export type Service = 'S3' | 'Temporal';

export const unavailable = (service: Service, where: string, cause: string): ViewerError =>
  new ViewerError(503, `${service} is not answering`, `${service} at ${where} did not answer: ${cause}. The viewer keeps running; reload once it is back.`);
