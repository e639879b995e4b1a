/** Exact-length prompt synthesis and calibration. */
export { Filler, fillerFor, fillerText, composePrompt, buildPrompt, hashSeed, prng, FILLER_WORDS, DEFAULT_TOKENS_PER_WORD, type BuildPromptOptions, type ComposeOptions } from './synth.js';
export {
  PromptCalibrator,
  toleranceTokens,
  SHORTEST_PROMPT,
  TOLERANCE_MIN_TOKENS,
  TOLERANCE_FRACTION,
  DEFAULT_MAX_MEASUREMENTS,
  type CalibrateRequest,
  type CalibratedPrompt,
  type CalibrationMode,
  type CalibratorOptions,
  type AdapterCalibratorOptions,
} from './calibrate.js';
export { cellPrompts, calibrationSamples, requestTail, streamLead, TAIL_DIGITS, type CellPromptMode, type CellPrompts, type CellPromptsOptions } from './cell.js';
