import type { Interval } from '../model';

export const DAY_MS = 86_400_000;

export const addDays = (date: Date, days: number): Date => new Date(date.getTime() + days * DAY_MS);

/** Calendar arithmetic in UTC: a month from 31 January is the last day of February. */
export function addInterval(date: Date, interval: Interval, count: number): Date {
  switch (interval) {
    case 'day':
      return addDays(date, count);
    case 'week':
      return addDays(date, 7 * count);
    case 'month':
      return addMonths(date, count);
    case 'year':
      return addMonths(date, 12 * count);
  }
}

function addMonths(date: Date, months: number): Date {
  const d = new Date(date.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}
