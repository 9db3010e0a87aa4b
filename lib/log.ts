import pino, { type Logger } from 'pino';
import { processEnv } from './config';

/**
 * Structured logs carry keys and ids only: never bodies, one-time codes, secrets or payment
 * data. The redact list is a second line of defence for fields that should never be logged.
 */
export function createLogger(name: string, level = processEnv.logLevel() ?? 'info'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid, process: name },
    redact: {
      paths: [
        'oneTimeCode',
        '*.oneTimeCode',
        'body',
        '*.body',
        'html',
        '*.html',
        'text',
        '*.text',
        'password',
        '*.password',
        'secret',
        '*.secret',
        'token',
        '*.token',
        'authorization',
        '*.authorization',
      ],
      censor: '[redacted]',
    },
  });
}

export type { Logger };
