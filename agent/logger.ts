/** Structured logs for the agent (pino, JSON lines on stderr). */
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createAgentLogger(level = process.env.KUBELAB_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: 'kubelab-agent', level }, pino.destination(2));
}

export function quietLogger(): Logger {
  return pino({ level: 'silent' });
}
