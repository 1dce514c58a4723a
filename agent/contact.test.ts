import { describe, expect, it } from 'vitest';
import { ApiError } from '../client/api/errors.js';
import { FakeClock } from '../client/util/clock.js';
import { ControlPlaneContact, formatDuration } from './contact.js';

function contact() {
  const clock = new FakeClock(0);
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = {
    warn: (_o: object, msg: string) => lines.push({ level: 'warn', msg }),
    info: (_o: object, msg: string) => lines.push({ level: 'info', msg }),
    debug: () => undefined,
    error: () => undefined,
    child: () => logger,
  };
  const c = new ControlPlaneContact({ servers: ['https://cp:6443'], logger: logger as never, clock });
  return { c, clock, lines };
}

const unavailable = () => new ApiError('Unavailable', 'cannot reach the control plane');

describe('ControlPlaneContact', () => {
  it('logs an outage once, however many calls fail, and its end with its length', () => {
    const { c, clock, lines } = contact();
    let restored = 0;
    c.onRestored(() => restored++);
    for (let i = 0; i < 5; i++) c.failed(unavailable(), c.mark());
    expect(c.explains(unavailable())).toBe(true);
    clock.advance(65_000);
    c.succeeded(c.mark());
    expect(lines.map((l) => l.level)).toEqual(['warn', 'info']);
    expect(lines[1].msg).toMatch(/^the control plane answers again after 1 min 5 s away/);
    expect(restored).toBe(1);
    expect(c.away).toBe(false);
  });

  it('a refusal is an answer: it ends an outage; errors of the control plane do not start one', () => {
    const { c, lines } = contact();
    c.observe(new ApiError('NotFound', 'no such pod'));
    expect(lines).toHaveLength(0);
    c.observe(unavailable());
    c.observe(new ApiError('Conflict', 'changed meanwhile'));
    expect(lines.map((l) => l.level)).toEqual(['warn', 'info']);
  });

  it('calls on their way when an outage begins or ends do not flip it back', () => {
    const { c, lines } = contact();
    const before = c.mark();
    c.failed(unavailable(), c.mark());
    // A write sent before the outage began, answered while the server shut down.
    c.succeeded(before);
    expect(c.away).toBe(true);
    const during = c.mark();
    c.succeeded(c.mark());
    // A call stuck since the outage fails after the control plane came back.
    const late = unavailable();
    c.failed(late, during);
    expect(c.away).toBe(false);
    // Its caller logs it at debug: it belongs to the outage already told.
    expect(c.explains(late)).toBe(true);
    expect(c.explains(unavailable())).toBe(false);
    expect(lines.map((l) => l.level)).toEqual(['warn', 'info']);
  });

  it('says how long, as a person reads it', () => {
    expect(formatDuration(4_200)).toBe('4 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(3_780_000)).toBe('1 h 3 min');
  });
});
