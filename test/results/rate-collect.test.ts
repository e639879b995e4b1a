/**
 * Open-loop rate cells gathered into the result: `kind: 'rate'` metas become `rateCells`, ordered
 * by context then rate, last one wins per rate cell key, absent when there are none; a rate meta
 * carries the run info as a cell meta does (a shard without the probe), and the result validates.
 */
import { expect, test } from 'vitest';
import { collectResult } from '../../src/results/collect.js';
import { validateResult } from '../../src/results/validate.js';
import { rateCellKey } from '../../src/shapes/labels.js';
import type { SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo } from './fixtures/sglang-h200.js';
import { RATE_SETTINGS, rateCellsFixture, rateResult } from './fixtures/rate-cells.js';

const info = () => ({ ...sglangInfo(), run: { ...sglangInfo().run, rates: { ...RATE_SETTINGS } } });

test('rate metas in any order become rateCells by context then rate; the last wins per key', () => {
  const rates = rateCellsFixture();
  const rerun = { ...rates[2]!, finishedAt: '2026-01-01T01:00:00.000Z', status: 'valid' as const, statuses: ['valid' as const] };
  const metas: SpeedMatrixMeta[] = [
    ...[...rates].reverse().map((cell) => ({ kind: 'rate' as const, cell })),
    { kind: 'cell', cell: sglangCells()[0]! },
    { kind: 'rate', cell: rerun },
    { kind: 'run', info: info() },
  ];
  const result = collectResult(metas, { partial: false })!;
  expect(result.rateCells!.map((c) => rateCellKey(c.context, c.rate))).toEqual(['8K@0.5', '8K@1', '8K@2', '8K@4', '32K@0.5', '32K@1', '32K@2', '32K@4', '64K@0.5']);
  expect(result.rateCells![2]).toEqual(rerun);
  // the decode cells are untouched and the rate cells are not among them
  expect(result.cells).toHaveLength(1);
  expect(result.info.run.rates).toEqual(RATE_SETTINGS);
  expect(validateResult(JSON.parse(JSON.stringify(result))).ok).toBe(true);
});

test('0.5 sorts before 1 and 4 before 16 (numbers, not text)', () => {
  const base = rateCellsFixture()[0]!;
  const metas: SpeedMatrixMeta[] = [16, 4, 1, 0.5].map((rate) => ({ kind: 'rate' as const, cell: { ...base, rate } }));
  const result = collectResult([{ kind: 'run', info: info() }, ...metas], { partial: true })!;
  expect(result.rateCells!.map((c) => c.rate)).toEqual([0.5, 1, 4, 16]);
});

test('no rate metas: no rateCells key at all (a run without rates keeps its JSON)', () => {
  const result = collectResult([{ kind: 'run', info: sglangInfo() }, { kind: 'cell', cell: sglangCells()[0]! }], { partial: false })!;
  expect('rateCells' in result).toBe(false);
});

test('a rate meta carries the run info when no run meta is there (a shard); rate cells count toward no planned cells', () => {
  const carried = { ...info(), title: 'carried', plannedCells: ['8K/1'] };
  const rates = rateCellsFixture();
  const result = collectResult([{ kind: 'rate', cell: rates[0]!, info: carried }, { kind: 'rate', cell: rates[1]! }], { partial: false })!;
  expect(result.info.title).toBe('carried');
  expect(result.rateCells).toHaveLength(2);
  // a Not run rate cell is not a missing decode cell
  expect(result.incomplete?.notRun ?? []).toEqual([]);
  expect(result.incomplete?.missing).toEqual(['8K/1']);
});

test('metas split over two shards merge into the one-machine result', () => {
  const rates = rateCellsFixture();
  const shardA: SpeedMatrixMeta[] = [{ kind: 'run', info: info() }, ...rates.filter((c) => c.context === 8192).map((cell) => ({ kind: 'rate' as const, cell, info: info() }))];
  const shardB: SpeedMatrixMeta[] = rates.filter((c) => c.context !== 8192).map((cell) => ({ kind: 'rate' as const, cell, info: info() }));
  const merged = collectResult([...shardB, ...shardA], { partial: false })!;
  const single = collectResult([{ kind: 'run', info: info() }, ...rates.map((cell) => ({ kind: 'rate' as const, cell }))], { partial: false })!;
  expect(merged.rateCells).toEqual(single.rateCells);
});

test('the fixture result validates against the schema', () => {
  expect(validateResult(JSON.parse(JSON.stringify(rateResult()))).ok).toBe(true);
});
