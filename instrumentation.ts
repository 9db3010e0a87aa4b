/**
 * Next's start-up hook: the console validates the webhook sources it trusts
 * (lib/events/webhook-sources.ts), the operator's notice configuration (NOTICE_CONFIG) and its
 * templates (lib/templates) before it serves a request, so a bad file stops `next start`
 * with the field it names instead of failing the first producer call that plans a notice; and it
 * installs tracing when an OTLP endpoint is configured (lib/telemetry/start.ts; off otherwise,
 * nothing loaded).
 */
export async function register(): Promise<void> {
  // The hook also runs for the edge runtime, which cannot read files; the console's routes run on Node.
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { activeNoticeConfig } = await import('@/lib/windows/active');
  const { startTracing } = await import('@/lib/telemetry/start');
  const { prepareTemplates } = await import('@/lib/templates/load');
  const { assertWebhookSources } = await import('@/lib/events/webhook-sources');
  try {
    // Every template file is parsed and checked against its declared variables, the layout compiled.
    await prepareTemplates(activeNoticeConfig().config);
    // Every enabled provider webhook names what it trusts (in production: its credential, SES its topics).
    assertWebhookSources();
    // Spans end with their requests; a stopping console loses at most the last batch (5 s).
    await startTracing({ serviceName: 'notice-ledger-console' });
  } catch (error) {
    // Next logs a failing hook and serves anyway ("Failed to preload entries"): stop instead.
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
