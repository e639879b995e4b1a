/** The pages written beside a result's JSON (src/results/write.ts writes them; this renders them). */
import type { ResultPages } from '../results/write.js';
import type { SpeedMatrixResult } from '../shapes/result.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';

export function renderResultPages(result: SpeedMatrixResult): ResultPages {
  return { markdown: renderMarkdown(result), html: renderHtml(result) };
}
