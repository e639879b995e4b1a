/**
 * Progress lines from inside a running cell (scout, gate, window), so a long run is never silent.
 * Written straight to stderr: Vitest would otherwise hold console output until the test ends.
 * LLM_BENCH_QUIET=1 silences them, through the resolved settings (src/config/settings.ts).
 */
import { processSettings, type RunSettings } from '../config/settings.js';

/** A printer for these settings: nothing when quiet, else `[speed-matrix HH:MM:SS] message` to `write`. */
export function progressPrinter(settings: Pick<RunSettings, 'quiet'>, write: (text: string) => void = (t) => void process.stderr.write(t)): (message: string) => void {
  return (message) => {
    if (settings.quiet) return;
    const t = new Date().toISOString().slice(11, 19);
    write(`[speed-matrix ${t}] ${message}\n`);
  };
}

let printer: ((message: string) => void) | undefined;

/** One progress line, with this process's settings. */
export function progress(message: string): void {
  printer ??= progressPrinter(processSettings());
  printer(message);
}
