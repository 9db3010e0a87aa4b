/**
 * The one shape of an inner helper's answer when its input can be refused: the value, or the
 * problems that make the input unusable, each a sentence that names its field. How a refusal
 * reads on the wire (a status, a code) is the HTTP boundary's business (lib/http/refusal.ts),
 * not the helper's.
 */
export type Invalid = { ok: false; problems: string[] };

export type Result<T> = { ok: true; value: T } | Invalid;

export function valid<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function invalid(...problems: string[]): Invalid {
  return { ok: false, problems };
}
