/**
 * Structured logs (pino, JSON lines). The server logs to stderr; tests get a silent logger.
 */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(
  options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  return pino(
    { name: options.name ?? 'kubelab', level: options.level ?? process.env.KUBELAB_LOG_LEVEL ?? 'info' },
    (options.destination as pino.DestinationStream | undefined) ?? pino.destination(2),
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
