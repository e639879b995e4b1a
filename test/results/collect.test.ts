import { expect, test } from 'vitest';
import { collectResult, plannedCellKeys } from '../../src/results/collect.js';
import type { SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo, sglangPrefill } from './fixtures/sglang-h200.js';

test('no run meta: no result', () => {
  expect(collectResult([{ kind: 'cell', cell: sglangCells()[0]! }], { partial: true })).toBeUndefined();
});

test('orders cells by context then concurrency, prefill by context; last wins per cell', () => {
  const cells = sglangCells();
  const rerun = { ...cells[0]!, finishedAt: 'rerun' };
  const metas: SpeedMatrixMeta[] = [
    ...[...cells].reverse().map((cell) => ({ kind: 'cell' as const, cell })),
    { kind: 'cell', cell: rerun },
    ...[...sglangPrefill()].reverse().map((row) => ({ kind: 'prefill' as const, row })),
    { kind: 'run', info: sglangInfo() },
  ];
  const result = collectResult(metas, { partial: false, endedAt: 'end' })!;
  expect(result.cells).toHaveLength(40);
  expect(result.cells.map((c) => [c.context, c.concurrency])).toEqual(
    cells.map((c) => [c.context, c.concurrency]),
  );
  expect(result.cells[0]!.finishedAt).toBe('rerun');
  expect(result.prefill.map((p) => p.contextLabel)).toEqual(['8K', '16K', '32K', '64K', '123K', '128K']);
  expect(result).toMatchObject({ schemaVersion: 2, partial: false, endedAt: 'end' });
});

test('planned lists are the union over run metas; default plan is contexts × concurrency', () => {
  const a = { ...sglangInfo(), plannedCells: ['8K/2', '8K/1'], plannedPrefill: ['8K'] };
  const b = { ...sglangInfo(), plannedCells: ['16K/1', '8K/1'], plannedPrefill: ['16K'] };
  const result = collectResult([{ kind: 'run', info: a }, { kind: 'run', info: b }], { partial: true })!;
  expect(result.info.plannedCells).toEqual(['8K/1', '8K/2', '16K/1']);
  expect(result.info.plannedPrefill).toEqual(['8K', '16K']);
  expect(plannedCellKeys(sglangInfo())).toHaveLength(40);
  expect(plannedCellKeys(sglangInfo())[0]).toBe('8K/1');
});

test('run info carried by cell metas is used when no run meta is present; a run meta wins', () => {
  const carried = { ...sglangInfo(), title: 'carried', plannedCells: ['8K/1'] };
  const cell = sglangCells()[0]!;
  const r1 = collectResult([{ kind: 'cell', cell, info: carried }], { partial: true })!;
  expect(r1.info.title).toBe('carried');
  expect(r1.info.plannedCells).toEqual(['8K/1']);
  const r2 = collectResult([{ kind: 'run', info: sglangInfo() }, { kind: 'cell', cell, info: carried }], { partial: true })!;
  expect(r2.info.title).toBe('Muse-Glimmer-30B on H200 NVL 141GB');
});
