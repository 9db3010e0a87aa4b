import type { z, ZodType } from 'zod';
import { config } from '@/lib/config';
import { parseInput } from '@/lib/http/body';
import { refuse, type Result } from '@/lib/http/refusal';
import { hasUnsafeText } from '@/lib/api/fields';
import { createCsvStream } from './csv-stream';
import { createUploadValidator, type UploadValidation, type UploadValidator } from './upload';

/**
 * The console's replay upload, `{"csv": "…", "reason": "…"}` (or a filter instead of the file),
 * read as it arrives: the JSON is tokenized piece by piece, the `csv` string's characters go
 * straight through the CSV parser (./csv-stream.ts) into the row validator, and only the
 * validated rows and the rejections stay. The body is cut off, in words, the moment it passes
 * REPLAY_UPLOAD_MAX_BYTES or its file passes REPLAY_UPLOAD_MAX_ROWS rows: nothing is written
 * and the rest is never read. Until this, up to 240 MB of JSON was buffered, then decoded and
 * parsed whole (several copies of it at once).
 */

/** What the envelope's `csv` reads as once its content went to the validator: it satisfies the schema's text checks. */
export const STREAMED_CSV = '(streamed)';

/** Everything but the file: a reason and maybe a filter, never large. */
const MAX_OTHER_MEMBERS_CHARS = 64 * 1024;

export type UploadCaps = { maxBytes: number; maxRows: number };
export type ReadUpload<T> = { input: T; upload: UploadValidation | null };

class BodyRefusal extends Error {
  constructor(readonly result: { ok: false; refusal: ReturnType<typeof refuse>['refusal'] }) {
    super(result.refusal.message);
  }
}

const invalidJson = () => new BodyRefusal(refuse('invalid_input', 'the body is not valid JSON', { code: 'invalid_json' }));

const escapes: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

type State = 'start' | 'key-or-end' | 'key' | 'colon' | 'value' | 'csv' | 'raw' | 'comma-or-end' | 'done';

/**
 * The top-level JSON object's members: `csv` (a string) is decoded into `onCsv` piece by piece,
 * every other member is kept as raw JSON text and parsed at its end.
 */
function createEnvelopeReader(onCsv: (text: string) => void) {
  let state: State = 'start';
  let key = '';
  let keyEscape = false;
  let csvSeen = false;
  let escape: string | null = null;
  let raw = '';
  let rawDepth = 0;
  let rawInString = false;
  let rawEscape = false;
  let otherChars = 0;
  const others: Record<string, unknown> = {};
  const isSpace = (char: string) => char === ' ' || char === '\n' || char === '\r' || char === '\t';
  const endRaw = () => {
    try {
      others[key] = JSON.parse(raw);
    } catch {
      throw invalidJson();
    }
    raw = '';
    state = 'comma-or-end';
  };

  const push = (text: string) => {
    let index = 0;
    while (index < text.length) {
      const char = text.charAt(index);
      switch (state) {
        case 'start':
          if (char === '{') state = 'key-or-end';
          else if (!isSpace(char)) throw invalidJson();
          index += 1;
          break;
        case 'key-or-end':
          if (char === '"') {
            state = 'key';
            key = '';
          } else if (char === '}') state = 'done';
          else if (!isSpace(char)) throw invalidJson();
          index += 1;
          break;
        case 'key':
          if (keyEscape) {
            key += escapes[char] ?? char;
            keyEscape = false;
          } else if (char === '\\') keyEscape = true;
          else if (char === '"') state = 'colon';
          else key += char;
          if (key.length > 100) throw invalidJson();
          index += 1;
          break;
        case 'colon':
          if (char === ':') state = 'value';
          else if (!isSpace(char)) throw invalidJson();
          index += 1;
          break;
        case 'value':
          if (isSpace(char)) {
            index += 1;
            break;
          }
          if (key === 'csv' && char === '"') {
            if (csvSeen) throw new BodyRefusal(refuse('invalid_input', 'csv: given more than once', { code: 'invalid_request' }));
            csvSeen = true;
            state = 'csv';
            index += 1;
            break;
          }
          state = 'raw';
          raw = '';
          rawDepth = 0;
          rawInString = false;
          rawEscape = false;
          break;
        case 'csv': {
          // A run of ordinary characters at once; escapes and the closing quote one by one.
          let end = index;
          while (end < text.length && escape === null) {
            const code = text.charCodeAt(end);
            if (code === 0x22 || code === 0x5c || code < 0x20) break;
            end += 1;
          }
          if (end > index) {
            onCsv(text.slice(index, end));
            index = end;
            break;
          }
          if (escape !== null) {
            escape += char;
            index += 1;
            if (escape.length === 1 && escape !== 'u') {
              const decoded = escapes[escape];
              if (decoded === undefined) throw invalidJson();
              onCsv(decoded);
              escape = null;
            } else if (escape.length === 5) {
              if (!/^u[0-9a-fA-F]{4}$/.test(escape)) throw invalidJson();
              onCsv(String.fromCharCode(parseInt(escape.slice(1), 16)));
              escape = null;
            }
            break;
          }
          if (char === '\\') escape = '';
          else if (char === '"') state = 'comma-or-end';
          else throw invalidJson();
          index += 1;
          break;
        }
        case 'raw': {
          otherChars += 1;
          if (otherChars > MAX_OTHER_MEMBERS_CHARS)
            throw new BodyRefusal(refuse('too_large', 'the fields besides csv are too large', { code: 'body_too_large' }));
          if (rawInString) {
            if (rawEscape) rawEscape = false;
            else if (char === '\\') rawEscape = true;
            else if (char === '"') rawInString = false;
          } else if (char === '"') rawInString = true;
          else if (char === '{' || char === '[') rawDepth += 1;
          else if (char === '}' || char === ']') {
            if (rawDepth === 0) {
              endRaw();
              break;
            }
            rawDepth -= 1;
          } else if (char === ',' && rawDepth === 0) {
            endRaw();
            break;
          }
          raw += char;
          index += 1;
          break;
        }
        case 'comma-or-end':
          if (char === ',') {
            state = 'key-or-end';
            index += 1;
            // A trailing comma before } is not JSON: the next token must be a key.
            while (index < text.length && isSpace(text.charAt(index))) index += 1;
            if (index < text.length && text.charAt(index) !== '"') throw invalidJson();
            break;
          }
          if (char === '}') state = 'done';
          else if (!isSpace(char)) throw invalidJson();
          index += 1;
          break;
        case 'done':
          if (!isSpace(char)) throw invalidJson();
          index += 1;
          break;
      }
    }
  };
  return {
    push,
    finish: (): { others: Record<string, unknown>; csvSeen: boolean } => {
      if (state !== 'done') throw invalidJson();
      return { others, csvSeen };
    },
  };
}

/**
 * Reads the request into the contract's input (with `csv` standing as STREAMED_CSV when the
 * file came) and the file's validation. Refusals: 413 past either cap, 400 for a body that is
 * not a JSON object or fails the schema.
 */
export async function readUploadBody<S extends ZodType>(
  request: Request,
  schema: S,
  { caps, validator }: { caps: UploadCaps; validator: () => UploadValidator },
): Promise<Result<ReadUpload<z.output<S>>>> {
  const tooLarge = () =>
    new BodyRefusal(
      refuse(
        'too_large',
        `The upload is larger than ${caps.maxBytes} bytes (REPLAY_UPLOAD_MAX_BYTES): split the file, or replay it with npm run ledger -- replay --csv.`,
        {
          code: 'upload_too_large',
        },
      ),
    );
  const tooManyRows = () =>
    new BodyRefusal(
      refuse('too_large', `The file has more than ${caps.maxRows} rows (REPLAY_UPLOAD_MAX_ROWS): split it, or replay it with npm run ledger -- replay --csv.`, {
        code: 'upload_too_many_rows',
      }),
    );
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (Number.isFinite(declared) && declared > caps.maxBytes) return tooLarge().result;
  const rows = validator();
  const csv = createCsvStream((record) => {
    rows.record(record);
    if (rows.rowCount() > caps.maxRows) throw tooManyRows();
  });
  let pending = '';
  const envelope = createEnvelopeReader((text) => {
    pending += text;
  });
  const flush = () => {
    if (pending === '') return;
    if (hasUnsafeText(pending)) rows.mayBeUnsafe();
    csv.push(pending);
    pending = '';
  };
  const reader = request.body?.getReader();
  const decoder = new TextDecoder('utf-8');
  let size = 0;
  try {
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > caps.maxBytes) throw tooLarge();
        envelope.push(decoder.decode(value, { stream: true }));
        flush();
      }
    }
    envelope.push(decoder.decode());
    flush();
    if (size === 0) return refuse('invalid_input', 'a JSON body is required', { code: 'invalid_json' });
    const { others, csvSeen } = envelope.finish();
    if (csvSeen) csv.end();
    const input = parseInput(csvSeen ? { ...others, csv: STREAMED_CSV } : others, schema);
    if (!input.ok) return input;
    return { ok: true, data: { input: input.data, upload: csvSeen ? rows.finish() : null } };
  } catch (error) {
    if (!(error instanceof BodyRefusal)) throw error;
    await reader?.cancel().catch(() => undefined);
    return error.result;
  }
}

/** The console's upload routes: the caps from the settings, rows keyed with NOTICE_KEY_SECRET. */
export function readConsoleUpload<S extends ZodType>(request: Request, schema: S): Promise<Result<ReadUpload<z.output<S>>>> {
  const settings = config();
  return readUploadBody(request, schema, {
    caps: { maxBytes: settings.REPLAY_UPLOAD_MAX_BYTES, maxRows: settings.REPLAY_UPLOAD_MAX_ROWS },
    validator: () => createUploadValidator({ secret: settings.NOTICE_KEY_SECRET }),
  });
}
