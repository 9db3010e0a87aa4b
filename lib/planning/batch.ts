import type { z, ZodType } from 'zod';
import { BATCH_MAX_ITEMS } from '@/lib/api/producer';
import { DEFAULT_BODY_LIMIT, parseInput } from '@/lib/http/body';
import type { ProducerAnswer } from '@/lib/http/producer-route';
import { refuse, type Result } from '@/lib/http/refusal';
import { producerRefusalAnswer } from '@/lib/http/wire';

/**
 * The batch routes' frame: each item is read as its single route reads a body (its schema, its
 * 64 KiB limit), the valid ones go to `run` in one call, and every item is answered with the
 * status and body its single route would have answered. A batch over BATCH_MAX_ITEMS is refused
 * whole (413), before anything is read from the database.
 */

export type BatchItemAnswer<B> = { index: number; status: number; body: B | { error: string; details: unknown } };

export async function answerBatch<S extends ZodType, R, O extends ZodType>(
  items: unknown[],
  {
    schema,
    run,
    answer,
  }: {
    schema: S;
    /** The valid items, in order; answers one result per item, in the same order. */
    run: (requests: z.output<S>[]) => Promise<R[]>;
    answer: (result: R) => Result<ProducerAnswer<O>>;
  },
): Promise<Result<{ status: 200; body: { results: BatchItemAnswer<z.input<O>>[] } }>> {
  if (items.length > BATCH_MAX_ITEMS) {
    const message = `a batch holds at most ${BATCH_MAX_ITEMS} items and this one has ${items.length}; send it in batches of ${BATCH_MAX_ITEMS} or fewer`;
    return refuse('too_large', message, { code: 'batch_too_large', details: { message, limit: BATCH_MAX_ITEMS, items: items.length } });
  }
  const answers: (BatchItemAnswer<z.input<O>> | undefined)[] = [];
  const valid: { index: number; request: z.output<S> }[] = [];
  for (const [index, item] of items.entries()) {
    // The single route refuses a body over its limit before it parses it; JSON text is the nearest measure here.
    if (Buffer.byteLength(JSON.stringify(item) ?? '', 'utf8') > DEFAULT_BODY_LIMIT) {
      answers[index] = {
        index,
        ...producerRefusalAnswer(refuse('too_large', `the body must be under ${DEFAULT_BODY_LIMIT} bytes`, { code: 'body_too_large' }).refusal),
      };
      continue;
    }
    const parsed = parseInput(item, schema);
    if (!parsed.ok) answers[index] = { index, ...producerRefusalAnswer(parsed.refusal) };
    else valid.push({ index, request: parsed.data });
  }
  const results = await run(valid.map((item) => item.request));
  if (results.length !== valid.length) throw new Error(`the batch answered ${results.length} results for ${valid.length} items`);
  for (const [position, { index }] of valid.entries()) {
    const result = results[position];
    if (result === undefined) throw new Error(`batch item ${index} has no result`);
    const answered = answer(result);
    answers[index] = answered.ok ? { index, status: answered.data.status, body: answered.data.body } : { index, ...producerRefusalAnswer(answered.refusal) };
  }
  return {
    ok: true,
    data: {
      status: 200,
      body: {
        results: answers.map((item, index) => {
          if (!item) throw new Error(`batch item ${index} has no answer`);
          return item;
        }),
      },
    },
  };
}
