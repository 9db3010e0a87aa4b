/** A CSV record and the physical line it started on, so a rejection names the line an operator sees in their editor. */
export type CsvRecord = { line: number; fields: string[] };

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

export type CsvStream = {
  /** The next piece of the file, cut anywhere (inside a field, a quote pair or a CRLF). */
  push: (text: string) => void;
  /** The file ended: the last record, if any, is emitted. */
  end: () => void;
};

/**
 * RFC 4180 CSV (quoted fields may hold commas, quotes and line breaks; CRLF or LF), fed piece by piece: each record is handed to
 * `onRecord` as soon as its line ends, so an upload is validated while it arrives and the file
 * is never held whole. Two things cannot be decided at the end of a piece and wait for the
 * next: a quote inside a quoted field (`""` or the closing quote) and a CR (CRLF or CR alone).
 * Runs of ordinary characters are copied with one slice each (`input.slice(runStart, index)` is
 * the run not yet added to the field): appending char by char made a string per character, and
 * collecting them was most of the time spent on a 1 M-row upload.
 */
export function createCsvStream(onRecord: (record: CsvRecord) => void): CsvStream {
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let quoteSeen = false;
  let crSeen = false;
  let started = false;
  let line = 1;
  let recordLine = 1;
  const endRecord = () => {
    fields.push(field);
    field = '';
    if (!(fields.length === 1 && fields[0] === '')) onRecord({ line: recordLine, fields });
    fields = [];
  };
  const push = (text: string) => {
    let input = text;
    if (!started && input.length > 0) {
      started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    let index = 0;
    if (crSeen && input.length > 0) {
      crSeen = false;
      if (input.charCodeAt(0) === LF) index = 1;
    }
    if (quoteSeen && input.length > index) {
      quoteSeen = false;
      if (input.charCodeAt(index) === QUOTE) {
        field += '"';
        index += 1;
      } else quoted = false;
    }
    let runStart = index;
    while (index < input.length) {
      const code = input.charCodeAt(index);
      if (quoted) {
        if (code === QUOTE) {
          field += input.slice(runStart, index);
          if (index + 1 === input.length) {
            quoteSeen = true;
            index += 1;
            runStart = index;
            break;
          }
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
        if (code === CR) {
          if (index + 1 === input.length) crSeen = true;
          else if (input.charCodeAt(index + 1) === LF) index += 1;
        }
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
  };
  return {
    push,
    end: () => {
      quoteSeen = false;
      if (field !== '' || fields.length > 0) endRecord();
    },
  };
}
