import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsv } from './csv';
import { createCsvStream, type CsvRecord } from './csv-stream';

function streamed(pieces: readonly string[]): CsvRecord[] {
  const records: CsvRecord[] = [];
  const stream = createCsvStream((record) => records.push(record));
  for (const piece of pieces) stream.push(piece);
  stream.end();
  return records;
}

/** Cuts `text` at the given offsets (sorted, deduplicated). */
function cut(text: string, offsets: readonly number[]): string[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe('createCsvStream', () => {
  it('reads what parseCsv reads, wherever the file is cut: inside quotes, between "" and CR LF, after the BOM', () => {
    const alphabet = fc.constantFrom('a', 'b', ',', '"', '\r', '\n', ' ', 'é', '\uFEFF');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 80 }), fc.array(fc.nat(), { maxLength: 12 }), (chars, offsets) => {
        const text = chars.join('');
        expect(streamed(cut(text, offsets))).toEqual(parseCsv(text));
      }),
      { numRuns: 3000, seed: Number(process.env.FC_SEED ?? 42) },
    );
  });

  it('emits each record as soon as its line ends', () => {
    const seen: number[] = [];
    const stream = createCsvStream((record) => seen.push(record.line));
    stream.push('h1,h2\r');
    expect(seen).toEqual([1]);
    stream.push('\n"a\nb",c\n');
    expect(seen).toEqual([1, 2]);
    stream.push('d,e');
    stream.end();
    expect(seen).toEqual([1, 2, 4]);
  });
});
