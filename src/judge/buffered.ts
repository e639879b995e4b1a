/**
 * Stream buffered (issue 19): whether a cell's chunks arrived bunched, as no engine sends them, so
 * that its TTFT and time between tokens are a buffering proxy's, not the server's. The evidence is
 * a figure (src/metrics/bunching.ts streamBunching); the rule is here.
 *
 * The stream is buffered when the zero-gap share is at least BUFFERED_ZERO_GAP_SHARE over at least
 * MIN_GAPS gaps, or when the median burst holds at least BUFFERED_MEDIAN_BURST_TOKENS tokens (a
 * proxy that delivers each request whole: no gap at all to look at). Pure.
 */
import type { StreamBunching } from '../metrics/bunching.js';

export const BUFFERED_ZERO_GAP_SHARE = 0.5;
export const MIN_GAPS = 10;
/** more tokens at one instant than any engine step makes for one request */
export const BUFFERED_MEDIAN_BURST_TOKENS = 16;

/** Whether the bunching evidence of a cell makes it Stream buffered (the rule in this file's header). */
export function isBuffered(b: StreamBunching): boolean {
  return (b.gaps >= MIN_GAPS && b.zeroGapShare >= BUFFERED_ZERO_GAP_SHARE) || b.burstTokens.median >= BUFFERED_MEDIAN_BURST_TOKENS;
}
