/**
 * The house rules dependency-cruiser cannot see, read from the TypeScript syntax tree:
 *   - no source file over MAX_FILE_LINES lines (generated files excepted);
 *   - no function (declaration, method, arrow, expression) over MAX_FUNCTION_LINES lines;
 *   - no `process.env` read outside src/config (configuration is read once, there);
 *   - no two files of the same name in different folders, unless the name is one role
 *     (SAME_ROLE_NAMES: every `cli.ts` is a subcommand's command line, …).
 * A string that merely contains "process.env" (the workflow text `init` writes) is not a read.
 *
 *   npx tsx scripts/house/sizes.ts      prints every breach, exit 1 when there is one
 *
 * test/house/house.test.ts runs the same check in the unit project.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 120;
/** the folders whose sources the rules cover */
export const HOUSE_ROOTS = ['src', 'reporters'] as const;
/** the one folder that may read the environment */
export const ENV_FOLDER = 'src/config/';

/** File names that may repeat across folders, because each copy plays the same role. */
export const SAME_ROLE_NAMES: Readonly<Record<string, string>> = {
  'cli.ts': "a subcommand's command line",
  'index.ts': "a folder's entry point",
  'errors.ts': "a layer's error classes",
  'schema.ts': 'the zod schema of an input file',
  'load.ts': 'reads and checks an input file',
};

export interface Breach {
  file: string;
  line: number;
  rule: 'file-lines' | 'function-lines' | 'process-env' | 'same-name' | 'spread-argument';
  text: string;
}

function sourcesUnder(dir: string, root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourcesUnder(path, root));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, path).split('\\').join('/'));
  }
  return out;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  return '(anonymous)';
}

/**
 * A spread of the enclosing function's own rest parameter (`(...args) => f(...args)`): it passes on
 * the arguments the function was called with, no more than a call already took.
 */
function forwardsRest(spread: ts.SpreadElement): boolean {
  if (!ts.isIdentifier(spread.expression)) return false;
  const name = spread.expression.text;
  for (let node: ts.Node | undefined = spread.parent; node; node = node.parent) {
    if (ts.isFunctionLike(node)) return node.parameters.some((p) => p.dotDotDotToken !== undefined && ts.isIdentifier(p.name) && p.name.text === name);
  }
  return false;
}

/** The breaches of one file's text (path relative to the repository root). */
export function breachesOf(file: string, text: string): Breach[] {
  const breaches: Breach[] = [];
  if (file.endsWith('.gen.ts')) return breaches;
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  if (lines > MAX_FILE_LINES) breaches.push({ file, line: 1, rule: 'file-lines', text: `${lines} lines (at most ${MAX_FILE_LINES})` });
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.getStart(sf));
      const span = lineOf(node.getEnd()) - first + 1;
      if (span > MAX_FUNCTION_LINES) {
        breaches.push({ file, line: first, rule: 'function-lines', text: `${functionName(node, sf)}: ${span} lines (at most ${MAX_FUNCTION_LINES})` });
      }
    }
    if (
      !file.startsWith(ENV_FOLDER) &&
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'env' &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'process'
    ) {
      breaches.push({ file, line: lineOf(node.getStart(sf)), rule: 'process-env', text: `process.env read outside ${ENV_FOLDER}: take the value from the resolved configuration` });
    }
    if (ts.isSpreadElement(node) && (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent)) && !forwardsRest(node)) {
      breaches.push({ file, line: lineOf(node.getStart(sf)), rule: 'spread-argument', text: `${node.parent.getText(sf).slice(0, 60)}: one call argument per element` });
    }
    // f.apply(this, xs) and Reflect.apply(f, this, xs) pass an array as arguments the same way
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'apply') {
      const reflect = ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'Reflect';
      if (node.arguments.length === (reflect ? 3 : 2)) {
        breaches.push({ file, line: lineOf(node.getStart(sf)), rule: 'spread-argument', text: `${node.getText(sf).slice(0, 60)}: an array as arguments, one per element` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return breaches;
}

/** Files that share a name with a file in another folder, where the name is not one role. */
export function sameNameBreaches(files: readonly string[]): Breach[] {
  const byName = new Map<string, string[]>();
  for (const file of files) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  const breaches: Breach[] = [];
  for (const [name, paths] of byName) {
    if (paths.length < 2 || SAME_ROLE_NAMES[name] !== undefined) continue;
    for (const file of paths) {
      breaches.push({ file, line: 1, rule: 'same-name', text: `${name} is also ${paths.filter((p) => p !== file).join(', ')}: name each file by its job` });
    }
  }
  return breaches;
}

/** Every breach under the house roots of a repository. */
export function houseBreaches(root: string): Breach[] {
  const files = HOUSE_ROOTS.flatMap((dir) => sourcesUnder(join(root, dir), root));
  return [...files.flatMap((file) => breachesOf(file, readFileSync(join(root, file), 'utf8'))), ...sameNameBreaches(files)];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const breaches = houseBreaches(root);
  for (const b of breaches) console.log(`${b.file}:${b.line}  ${b.rule}  ${b.text}`);
  console.log(breaches.length === 0 ? 'house rules: 0 breaches' : `house rules: ${breaches.length} breaches`);
  process.exitCode = breaches.length === 0 ? 0 : 1;
}
