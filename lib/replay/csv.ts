/**
 * RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks; CRLF or LF.
 * Each record carries the physical line it started on, so a rejection names the line an
 * operator sees in their editor.
 */
export type CsvRecord = { line: number; fields: string[] };

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Copies runs of ordinary characters with one slice each (`input.slice(runStart, index)` is
 * the run not yet added to the field): appending char by char made a string per character,
 * and collecting them was most of the time spent on a 1 M-row upload.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let index = 0;
  let runStart = 0;
  const endRecord = () => {
    fields.push(field);
    field = '';
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: recordLine, fields });
    fields = [];
  };
  while (index < input.length) {
    const code = input.charCodeAt(index);
    if (quoted) {
      if (code === QUOTE) {
        field += input.slice(runStart, index);
        if (input.charCodeAt(index + 1) === QUOTE) {
          field += '"';
          index += 2;
        } else {
          quoted = false;
          index += 1;
        }
        runStart = index;
        continue;
      }
      if (code === LF) line += 1;
      index += 1;
      continue;
    }
    if (code === QUOTE && field === '' && runStart === index) {
      quoted = true;
      index += 1;
      runStart = index;
      continue;
    }
    if (code === COMMA) {
      fields.push(field + input.slice(runStart, index));
      field = '';
      index += 1;
      runStart = index;
      continue;
    }
    if (code === LF || code === CR) {
      field += input.slice(runStart, index);
      if (code === CR && input.charCodeAt(index + 1) === LF) index += 1;
      endRecord();
      line += 1;
      recordLine = line;
      index += 1;
      runStart = index;
      continue;
    }
    index += 1;
  }
  field += input.slice(runStart, index);
  if (field !== '' || fields.length > 0) endRecord();
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

const unsafeText = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** NUL or an unpaired surrogate: PostgreSQL text and jsonb cannot hold them. */
export function hasUnsafeText(value: string): boolean {
  return unsafeText.test(value);
}

/** The same value with NUL dropped and unpaired surrogates replaced, for echoing back in a rejection. */
export function safeText(value: string): string {
  return value.replace(/\0/g, '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
