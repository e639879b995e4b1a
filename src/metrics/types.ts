/**
 * Figures of a cell and of a prefill row, as defined in docs/method.md (which follows
 * the shared METHOD.md). The shapes are the result schema's (src/results/speed-matrix.schema.json is
 * the source of truth; its descriptions carry each figure's definition and unit): computed here,
 * written there, one definition. A figure that cannot be computed is `undefined`, never 0.
 */
export type { CellFigures, CellStatus, Distribution, PrefillFigures } from '../results/speed-matrix.gen.js';
