/**
 * The prompts of one cell. Every request is `lead(stream) + sharedText + tail(request)`:
 * - `shared` mode: lead is empty, so all requests share the byte-identical `sharedText` prefix
 *   (prefix-cache friendly; the scout request warms it);
 * - `distinct` mode: each stream starts with its own lead, so streams share nothing from the first
 *   token on (no cross-stream prefix-cache hits); a stream's successive requests still share its
 *   own prefix.
 * Tails and leads are fixed-width (zero-padded numbers) so every request counts (nearly) the same
 * tokens as the calibration sample; calibrate with `tail: requestTail(0)` and, in distinct mode,
 * `lead: streamLead(0)`.
 */

export type CellPromptMode = 'shared' | 'distinct';

/** Digits of the request and stream numbers (fixed width keeps token counts steady). */
export const TAIL_DIGITS = 6;

/** The short per-request tail. */
export function requestTail(requestIndex: number): string {
  return ` Request ${String(requestIndex).padStart(TAIL_DIGITS, '0')}: continue.`;
}

/** The per-stream lead of distinct mode. */
export function streamLead(streamIndex: number): string {
  return `Stream ${String(streamIndex).padStart(TAIL_DIGITS, '0')}. `;
}

/** The lead and tail samples to calibrate with for a mode (pass them to PromptCalibrator.calibrate). */
export function calibrationSamples(mode: CellPromptMode): { lead: string; tail: string } {
  return { lead: mode === 'distinct' ? streamLead(0) : '', tail: requestTail(0) };
}

export interface CellPromptsOptions {
  /** the calibrated shared text (CalibratedPrompt.text) */
  sharedText: string;
  /** number of streams (workers) */
  concurrency: number;
  mode: CellPromptMode;
}

export interface CellPrompts {
  mode: CellPromptMode;
  /** the prompt for a stream's request; `requestIndex` should be unique within the cell */
  prompt(streamIndex: number, requestIndex: number): string;
  /** what to send before the window to warm the cache: one prompt (shared) or one per stream (distinct) */
  scoutPrompts(): string[];
  /** the calibration samples matching this mode */
  calibrationSamples: { lead: string; tail: string };
}

/** Prompt factory for a cell; see the file comment. */
export function cellPrompts(options: CellPromptsOptions): CellPrompts {
  const { sharedText, concurrency, mode } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`cellPrompts: concurrency must be an integer ≥ 1 (got ${concurrency}); fix the concurrency list.`);
  }
  const lead = (s: number): string => (mode === 'distinct' ? streamLead(s) : '');
  // the scout uses the highest request number so it never collides with a worker's request
  const scoutIndex = 10 ** TAIL_DIGITS - 1;
  return {
    mode,
    prompt: (streamIndex, requestIndex) => lead(streamIndex) + sharedText + requestTail(requestIndex),
    scoutPrompts: () =>
      mode === 'shared'
        ? [sharedText + requestTail(scoutIndex)]
        : Array.from({ length: concurrency }, (_, s) => lead(s) + sharedText + requestTail(scoutIndex)),
    calibrationSamples: calibrationSamples(mode),
  };
}
