/**
 * Probes of one running container, wired as the kubelet does: the startup probe first; once
 * it succeeds, liveness and readiness. Readiness drives the container's ready flag; a failed
 * liveness (or startup) probe has the container restarted.
 */
import type { Container, Pod } from '../../client/api/types.js';
import type { Clock } from '../../client/util/clock.js';
import type { Logger } from '../logger.js';
import { ProbeWorker, type ProbeKind, type ProbeTarget } from '../runtime/probes.js';
import type { RunningContainer } from '../runtime/types.js';
import type { ContainerProbes, ProbeCallbacks } from './worker.js';

export function startContainerProbes(
  _pod: Pod,
  container: Container,
  running: RunningContainer,
  callbacks: ProbeCallbacks,
  clock: Clock,
  logger: Logger,
): ContainerProbes | undefined {
  const { readinessProbe, livenessProbe, startupProbe } = container;
  if (!readinessProbe && !livenessProbe && !startupProbe) return undefined;
  const env: Record<string, string> = {
    ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
    ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
  };
  for (const e of container.env ?? []) if (e.name) env[e.name] = e.value ?? '';
  const target: ProbeTarget = {
    env,
    ports: container.ports,
    ...(container.workingDir ? { cwd: container.workingDir } : {}),
  };
  const workers: ProbeWorker[] = [];
  let stopped = false;

  const start = (
    kind: ProbeKind,
    probe: NonNullable<Container['readinessProbe']>,
    onChange: (ok: boolean, message?: string) => void,
  ) => {
    const worker = new ProbeWorker({
      kind,
      probe,
      target,
      clock,
      startedAt: running.startedAt,
      onChange: (state, last) => {
        if (stopped || state === 'unknown') return;
        onChange(state === 'success', last?.message);
      },
      onError: (err) =>
        logger.warn(
          { container: container.name, kind, err: (err as Error).message },
          'probe callback failed',
        ),
    });
    workers.push(worker);
    worker.start();
  };

  const startMain = () => {
    if (livenessProbe)
      start(
        'liveness',
        livenessProbe,
        (ok, message) => !ok && callbacks.unhealthy(message ?? 'liveness probe failed'),
      );
    if (readinessProbe) start('readiness', readinessProbe, (ok) => callbacks.ready(ok));
  };
  if (startupProbe) {
    start('startup', startupProbe, (ok, message) => {
      if (ok) {
        callbacks.started();
        startMain();
      } else {
        callbacks.unhealthy(`startup probe failed: ${message ?? ''}`);
      }
    });
  } else {
    startMain();
  }
  return {
    stop() {
      stopped = true;
      for (const w of workers) void w.stop();
    },
  };
}
