import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * Compiling the layout's MJML to HTML (its Liquid left in place), once per layout source. mjml
 * and what it loads (juice, cheerio, undici, js-beautify, postcss, …) add ~55 MB to a process
 * for one compile at start-up, and nothing on the send path uses them again. So there are two
 * ways to compile, with the same mjml, options and output (`mjml.test.ts`):
 *  - `compileMjmlInProcess` imports mjml on first use: the console (its previews) and tests;
 *  - `compileMjmlInChild` runs it in a short-lived node process and reads back the HTML: the
 *    worker, which never loads mjml itself (its RSS at ready fell by 55 MB, issue 27).
 * An MJML error comes back as an MjmlError with mjml's own message either way.
 */

export type MjmlCompiler = (source: string) => Promise<string>;

export class MjmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MjmlError';
  }
}

const options = { validationLevel: 'strict', keepComments: false } as const;

export const compileMjmlInProcess: MjmlCompiler = async (source) => {
  const { default: mjml2html } = await import('mjml');
  try {
    return (await mjml2html(source, options)).html;
  } catch (error) {
    throw new MjmlError(error instanceof Error ? error.message : String(error));
  }
};

/** The child: mjml from the path the parent resolved, the source on stdin, `{html}` or `{error}` as JSON on stdout. */
const childScript = `
const mjml2html = require(process.argv[1]);
let source = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { source += chunk; });
process.stdin.on('end', async () => {
  let answer;
  try {
    answer = { html: (await mjml2html(source, JSON.parse(process.argv[2]))).html };
  } catch (error) {
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(JSON.stringify(answer));
});
`;

export const compileMjmlInChild: MjmlCompiler = async (source) => {
  const mjmlPath = createRequire(import.meta.url).resolve('mjml');
  // The same working directory as an in-process compile: mjml looks for a .mjmlconfig there.
  const child = spawn(process.execPath, ['-e', childScript, mjmlPath, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
  const stdout: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.end(source, 'utf8');
  const code = await exit;
  let answer: { html?: unknown; error?: unknown } = {};
  try {
    answer = JSON.parse(Buffer.concat(stdout).toString('utf8')) as typeof answer;
  } catch {
    // No answer: the child failed before it could give one (stderr says why).
  }
  if (typeof answer.html === 'string') return answer.html;
  if (typeof answer.error === 'string') throw new MjmlError(answer.error);
  const lines = stderr.trim().split('\n');
  throw new Error(`the MJML compiler process exited (code ${String(code)}) without an answer: ${lines.find((line) => /Error/.test(line)) ?? lines[0] ?? ''}`);
};
