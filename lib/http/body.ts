import type { z, ZodType } from 'zod';
import { refuse, type Result } from './refusal';

/**
 * The one body reader: a size limit enforced while reading (a declared Content-Length over it
 * is refused before a byte is read; a chunked body is cut off at the limit), then JSON and a
 * schema. Every refusal is a 4xx that names what was wrong; nothing has been written yet.
 */

export const DEFAULT_BODY_LIMIT = 64 * 1024;

export async function readBytes(request: Request, { limitBytes = DEFAULT_BODY_LIMIT }: { limitBytes?: number } = {}): Promise<Result<Buffer>> {
  const tooLarge = () => refuse('too_large', `the body must be under ${limitBytes} bytes`, { code: 'body_too_large' });
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (Number.isFinite(declared) && declared > limitBytes) return tooLarge();
  if (!request.body) return { ok: true, data: Buffer.alloc(0) };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      return tooLarge();
    }
    chunks.push(value);
  }
  return { ok: true, data: Buffer.concat(chunks) };
}

export type IssueDetail = { path: string; message: string };

/** A schema's verdict on a value; a failure lists every issue with its path. */
export function parseInput<S extends ZodType>(raw: unknown, schema: S): Result<z.output<S>> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, data: parsed.data };
  const details: IssueDetail[] = parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
  const message = details.map((issue) => `${issue.path === '(body)' ? 'input' : issue.path}: ${issue.message}`).join('; ');
  return refuse('invalid_input', message, { code: 'invalid_request', details });
}

/** A JSON body through `schema`. An empty body is `{}` when `optional`, otherwise refused. */
export async function readJson<S extends ZodType>(
  request: Request,
  schema: S,
  { optional = false, limitBytes }: { optional?: boolean; limitBytes?: number } = {},
): Promise<Result<z.output<S>>> {
  const bytes = await readBytes(request, { limitBytes });
  if (!bytes.ok) return bytes;
  const text = bytes.data.toString('utf8');
  let raw: unknown = {};
  if (text.trim() === '') {
    if (!optional) return refuse('invalid_input', 'a JSON body is required', { code: 'invalid_json' });
  } else {
    try {
      raw = JSON.parse(text);
    } catch {
      return refuse('invalid_input', 'the body is not valid JSON', { code: 'invalid_json' });
    }
  }
  return parseInput(raw, schema);
}

/** The query string as an object (the last value of a repeated name), through `schema`. */
export function readQuery<S extends ZodType>(request: Request, schema: S): Result<z.output<S>> {
  return parseInput(Object.fromEntries(new URL(request.url).searchParams), schema);
}
