import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

/**
 * The console's real route handlers behind a plain node:http server on a free port: enough of
 * Next's routing for the producer API and the provider webhook, without a build. Handlers get
 * a real `Request` and Next's `{ params: Promise<…> }` context, as they do under `next start`.
 * A chaos run serves it from its own process (console-process.ts), as production would.
 */

export type RouteHandler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

export type Route = { method: string; pattern: string; handler: RouteHandler };

export type AppServer = { url: string; requests: () => Record<string, number>; close: () => Promise<void> };

function match(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = pathname.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const value = got[index] ?? '';
    if (part.startsWith('[') && part.endsWith(']')) params[part.slice(1, -1)] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return params;
}

async function readBody(incoming: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startAppServer(routes: readonly Route[]): Promise<AppServer> {
  const counts: Record<string, number> = {};
  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
      const found = routes.map((route) => ({ route, params: incoming.method === route.method ? match(route.pattern, url.pathname) : null })).find((entry) => entry.params !== null);
      const body = await readBody(incoming);
      if (!found?.params) {
        outgoing.writeHead(404).end();
        return;
      }
      const key = `${found.route.method} ${found.route.pattern}`;
      counts[key] = (counts[key] ?? 0) + 1;
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
      const request = new Request(url, { method: incoming.method, headers, body: body.length > 0 ? new Uint8Array(body) : undefined });
      const response = await found.route.handler(request, { params: Promise.resolve(found.params) });
      outgoing.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      if (!outgoing.headersSent) outgoing.writeHead(500).end(JSON.stringify({ error: error instanceof Error ? error.message : 'error' }));
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => ({ ...counts }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type ConsoleProcess = { url: string; stop: () => Promise<{ code: number | null; requests: Record<string, number> }> };

/** test/chaos/console-process.ts as a child process (node with the tsx loader, like the workers). */
export async function spawnConsoleProcess(env: Record<string, string>): Promise<ConsoleProcess> {
  const root = path.resolve(import.meta.dirname, '..', '..');
  const loader = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', loader, 'test/chaos/console-process.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test', NOTICE_LEDGER_PROCESS: 'notice-ledger-chaos-console', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let requests: Record<string, number> = {};
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { consoleUrl?: string; requests?: Record<string, number> };
        if (parsed.consoleUrl) resolve(parsed.consoleUrl);
        if (parsed.requests) requests = parsed.requests;
      } catch {
        // pino lines of the route handlers' loggers
      }
    });
    void exited.then((code) => reject(new Error(`console process exited before listening (code ${code}): ${stderr}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return { code, requests };
    },
  };
}
