import { createCsvStream, type CsvRecord } from './csv-stream';

/**
 * RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks; CRLF or LF.
 * Each record carries the physical line it started on, so a rejection names the line an
 * operator sees in their editor. A whole text is the stream parser (./csv-stream.ts) fed once.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const stream = createCsvStream((record) => records.push(record));
  stream.push(text);
  stream.end();
  return records;
}

/** A plain number (a count, a rate, a negative delta): a spreadsheet reads it as a number, never a formula. */
const plainNumber = /^-?\d+(\.\d+)?$/;

/** One CSV field: quoted when it holds a comma, quote or line break, or starts like a formula. */
export function csvField(value: string): string {
  // OWASP's rule: a leading = + - @, tab or carriage return makes spreadsheets evaluate the cell
  // (`-1+cmd|…` too, which starts with a digit after the sign); a quote in front keeps it text.
  const safe = /^[=+\-@\t\r]/.test(value) && !plainNumber.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** The same value with NUL dropped and unpaired surrogates replaced, for echoing back in a rejection. */
export function safeText(value: string): string {
  return value.replace(/\0/g, '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
