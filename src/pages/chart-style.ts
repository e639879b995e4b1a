/**
 * How the charts tell runs and contexts apart, one rule for every chart: one run (the report):
 * colour is the context; several (the comparison): colour is the run, line style the context.
 */
import { contextLabel } from '../shapes/labels.js';
import { DASHES, PALETTE, type LegendItem } from './svg.js';

export interface RunContextStyle {
  /** the colour and dash of run `run`'s line for the `ctx`-th context */
  style(run: number, ctx: number): { color: string; dash: string | undefined };
  legend: LegendItem[];
}

export function runContextStyle(runs: ReadonlyArray<{ label?: string }>, contexts: readonly number[]): RunContextStyle {
  const several = runs.length > 1;
  const style = (run: number, ctx: number) =>
    several
      ? { color: PALETTE[run % PALETTE.length]!, dash: DASHES[ctx % DASHES.length] }
      : { color: PALETTE[ctx % PALETTE.length]!, dash: DASHES[Math.floor(ctx / PALETTE.length) % DASHES.length] };
  const legend: LegendItem[] = several
    ? [
        ...runs.map((r, i) => ({ name: r.label ?? `run ${i + 1}`, color: style(i, 0).color })),
        ...contexts.map((context, j) => ({ name: `context ${contextLabel(context)}`, color: '#555', dash: style(0, j).dash })),
      ]
    : contexts.map((context, j) => ({ name: contextLabel(context), ...style(0, j) }));
  return { style, legend };
}
