/**
 * `defineSpeedMatrix(suite)`: called at the top level of a bench file, it resolves the suite,
 * opens the run (probe, warm-up), plans the matrix and generates one Vitest test per prefill row
 * and per cell, named "prefill 8K" and "decode 8K/16" so `-t "8K/16"` selects one cell.
 * Each test measures, stores its result in task meta for the reporter, and asserts status and
 * threshold budgets. Tests run one at a time (a file's tests are sequential; the matrix project
 * has no file parallelism).
 */
import { afterAll, describe, expect, inject, test } from 'vitest';
import { resolveSuite } from '../config/resolve.js';
import type { SuiteInput } from '../config/schema.js';
import { openRun, describeRun } from './open.js';
import { planMatrix } from './plan.js';
import { RunPrompts } from './prompts.js';
import { createCellRunner } from './cell-test.js';
import { createPrefillRunner } from './prefill-test.js';
import { loadThresholds } from '../thresholds/load.js';
import { contextLabel } from '../results/labels.js';

export async function defineSpeedMatrix(input: SuiteInput = {}): Promise<void> {
  const cfg = resolveSuite(input);
  const opened = await openRun(cfg);
  afterAll(() => opened.close());
  const plan = planMatrix(cfg.matrix, {
    kvCapacityTokens: opened.session.facts.kvCapacityTokens?.value,
    maxRunningRequests: opened.session.facts.maxRunningRequests?.value,
  });
  const info = describeRun(cfg, opened, plan);
  const updating = inject('speedMatrixUpdate') ?? false;
  const thresholds = loadThresholds(cfg.thresholdsPath, {
    cellKeys: plan.cells.map((c) => c.key),
    prefillKeys: plan.prefill.map((p) => contextLabel(p.context)),
    // -u may run against a changed matrix: the reporter rewrites the file at the end
    allowUnknown: updating,
  });
  const prompts = new RunPrompts(opened.session, cfg.promptMode);
  const ctx = { cfg, opened, info, thresholds, updating, prompts };
  const runPrefill = createPrefillRunner(ctx);
  const runCellTest = createCellRunner(ctx);

  describe(`speed matrix ${cfg.name}`, () => {
    for (const row of plan.prefill) {
      test(`prefill ${row.key}`, { timeout: cfg.timeouts.headersMs + cfg.timeouts.stallMs + 60_000 }, (tc) => runPrefill(row, tc));
    }
    for (const cell of plan.cells) {
      const timeout =
        cfg.timeouts.drainMs +
        cfg.timeouts.gateMs +
        cfg.timeouts.gatePerContextTokenMs * cell.context * cell.concurrency +
        cfg.matrix.windowS * 1000 +
        cfg.timeouts.headersMs +
        60_000;
      test(`decode ${cell.key}`, { timeout }, (tc) => runCellTest(cell, tc));
    }
  });
  void expect;
}
