import { resetConfigForTests } from '../../lib/config';
import { startAppServer, type RouteHandler } from './app-server';

/**
 * The console's side of a chaos run in its own process, as in production: the producer API
 * and the generic provider webhook, served by the real route handlers. Configuration comes
 * from the environment (DATABASE_URL, WEBHOOK_SECRET, VISIBILITY_TIMEOUT, …). Prints one JSON
 * line `{"consoleUrl": …}` when listening; SIGTERM closes it.
 */
async function main(): Promise<void> {
  resetConfigForTests();
  const reminders = await import('../../app/api/v1/reminders/route');
  const evidence = await import('../../app/api/v1/evidence/[ref]/route');
  const resolve = await import('../../app/api/v1/evidence/[ref]/resolve/route');
  const generic = await import('../../app/api/webhooks/generic/route');
  const app = await startAppServer([
    { method: 'POST', pattern: '/api/v1/reminders', handler: reminders.POST as RouteHandler },
    { method: 'PUT', pattern: '/api/v1/evidence/[ref]', handler: evidence.PUT as RouteHandler },
    { method: 'POST', pattern: '/api/v1/evidence/[ref]/resolve', handler: resolve.POST as RouteHandler },
    { method: 'POST', pattern: '/api/webhooks/generic', handler: generic.POST },
  ]);
  process.stdout.write(`${JSON.stringify({ consoleUrl: app.url })}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      await app.close();
      const { closeWakeupPublisher } = await import('../../lib/queue');
      await closeWakeupPublisher();
      const { getDb } = await import('../../db/client');
      await getDb().$client.end();
      process.stdout.write(`${JSON.stringify({ requests: app.requests() })}\n`);
      process.exit(0);
    })();
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
