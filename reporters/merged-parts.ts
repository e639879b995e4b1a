/**
 * What a `vitest --merge-reports` holds, read for the merge's checks (src/judge/merge.ts): the blob
 * folder and its files, every test name, the matrix files that defined no test, and which blobs
 * name each matrix file. The last is read from the blobs' own text: Vitest 4.1 hands a file that
 * two blobs hold on twice, Vitest 5 once (the other copy dropped before any reporter sees it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { TestModule } from 'vitest/node';
import type { MergedParts } from '../src/judge/merge.js';

/** `given`: the folder Vitest merged (read from the working folder, as Vitest reads it); `root`: the project's root. */
export function readMergedParts(given: string, root: string, testModules: ReadonlyArray<TestModule>, isMatrix: (m: TestModule) => boolean): MergedParts {
  const folder = resolve(process.cwd(), given);
  const matrix = testModules.filter(isMatrix);
  // Vitest 4.1 lists a file two blobs hold twice: each file once here
  const ids = [...new Set(matrix.map((m) => m.moduleId))];
  const blobsOfFile = new Map<string, string[]>(ids.map((id) => [relative(root, id), []]));
  let blobFiles: string[] = [];
  try {
    blobFiles = readdirSync(folder);
    for (const blob of blobFiles) {
      // a blob names each file it ran by its full path, a JSON string
      const text = readFileSync(join(folder, blob), 'utf8');
      for (const id of ids) if (text.includes(JSON.stringify(id))) blobsOfFile.get(relative(root, id))?.push(blob);
    }
  } catch {
    // Vitest read them first: not reached
  }
  const testNames = new Set(testModules.flatMap((m) => [...m.children.allTests()].map((t) => t.name)));
  const matrixTestNames = matrix.flatMap((m) => [...m.children.allTests()].map((t) => t.name));
  const filesWithoutTests = matrix.filter((m) => [...m.children.allTests()].length === 0).map((m) => relative(root, m.moduleId));
  return { folder, blobFiles, testNames, matrixTestNames, filesWithoutTests, blobsOfFile };
}
