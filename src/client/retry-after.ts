/**
 * A 429's `Retry-After` (RFC 9110 §10.2.3): delay-seconds (a whole number) or an HTTP-date, as
 * milliseconds from now; undefined when absent or unreadable. A date in the past is 0.
 */
export function retryAfterMs(header: string | string[] | undefined, nowEpochMs: number = Date.now()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // an HTTP-date in GMT (the IMF-fixdate, and RFC 850's); asctime's form names no zone and is not read
  // (a date already past reads 0: the caller waits its backoff at least)
  if (!/GMT$/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - nowEpochMs) : undefined;
}
