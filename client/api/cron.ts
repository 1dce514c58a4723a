/**
 * CronJob schedules (Kubernetes' robfig/cron standard parser): five fields — minute, hour, day
 * of month, month, day of week — or a macro (@yearly, @annually, @monthly, @weekly, @daily,
 * @midnight, @hourly), in spec.timeZone or the control plane's zone. Parsing and stepping are
 * cron-parser's; this file holds Kubernetes' rules around it.
 */
import { CronExpressionParser } from 'cron-parser';

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
const MAX_SCHEDULE_CHARS = 256;

export interface Schedule {
  /** The first schedule time strictly after `ms`. */
  next(ms: number): number;
  /** The last schedule time at or before `ms`, or undefined when there is none after `since`. */
  lastAtOrBefore(ms: number, since: number): number | undefined;
}

/** Why a schedule is not valid, or undefined when it is. */
export function scheduleError(schedule: string | undefined, timeZone?: string): string | undefined {
  try {
    parseSchedule(schedule ?? '', timeZone);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether `zone` is an IANA time zone this machine knows ("Europe/Berlin", "UTC"). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function parseSchedule(schedule: string, timeZone?: string): Schedule {
  const text = schedule.trim();
  if (!text) throw new Error('a schedule is required, e.g. "0 3 * * *" (03:00 every day) or "@daily"');
  if (text.length > MAX_SCHEDULE_CHARS) throw new Error(`must be at most ${MAX_SCHEDULE_CHARS} characters`);
  if (/^(CRON_)?TZ=/.test(text))
    throw new Error('cannot use TZ or CRON_TZ in schedule, use timeZone field instead');
  if (text.startsWith('@')) {
    if (!MACROS.has(text)) throw new Error(`unknown macro "${text}"; use one of ${[...MACROS].join(', ')}`);
  } else if (text.split(/\s+/).length !== 5) {
    throw new Error('must have five fields: minute hour day-of-month month day-of-week, e.g. "*/15 * * * *"');
  }
  if (timeZone !== undefined && !isTimeZone(timeZone)) throw new Error(`unknown time zone "${timeZone}"`);
  const tz = timeZone;
  // Validate now; cron-parser's message names the field and the allowed range.
  CronExpressionParser.parse(text, { ...(tz ? { tz } : {}) });
  return {
    next(ms) {
      return CronExpressionParser.parse(text, { currentDate: new Date(ms), ...(tz ? { tz } : {}) })
        .next()
        .getTime();
    },
    lastAtOrBefore(ms, since) {
      // cron-parser's prev() is strictly before; a time exactly at `ms` counts.
      const e = CronExpressionParser.parse(text, { currentDate: new Date(ms + 1), ...(tz ? { tz } : {}) });
      const t = e.prev().getTime();
      return t > since ? t : undefined;
    },
  };
}
