#!/usr/bin/env bash
# The package as a user meets it: pack the tarball, install it into a fresh project that has only
# vitest, run `init`, run the matrix on the embedded simulator (Node 20 = this node, then Node 22
# and 24 from npm's `node` package), check the page and the JSON, check that a threshold breach
# exits 1, the same with Vitest 5 on Node 22 and 24 (install, init, matrix, shards + merge, -u,
# a breach, types), that the types resolve under moduleResolution node16 and bundler, and that a missing
# peer or a wrong import path gives one line naming the fix. Run by .ci/run; by hand:
#   bash scripts/pack-check/run.sh
set -euo pipefail
# METHOD.md's 50 ms Client-limited bound, as the repository's test runs (vitest.config.ts says
# why): these runs check the package's flows, and CI's 2-core machine stalls a bench child's loop
# by 3-27 ms even at 1-2 streams; the 5 ms default is checked by test/accuracy/client-limited.test.ts
export LLM_BENCH_CLIENT_LIMIT_MS=50
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/pack-check"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
vitest_version="$(node -p "require('$root/package.json').devDependencies.vitest")"
# each step says when it starts (seconds into this script), so a slow CI run shows where its time went
step() { echo "-- $* [${SECONDS} s]"; }
fail() { echo "pack-check FAILED: $*" >&2; exit 1; }

step "build (when a source is newer than dist/) and pack"
# --if-stale: CI runs this beside the slow tier, whose processes read dist/ (the build is the same)
(cd "$root" && node scripts/build.mjs --if-stale >/dev/null)
(cd "$root" && npm pack --ignore-scripts --json --pack-destination "$work" 2>/dev/null) > "$work/pack.json"
tarball="$work/$(node -p "require('$work/pack.json')[0].filename")"
node "$here/check-tarball.mjs" "$work/pack.json"

step "a clean checkout without dist/: npm pack builds it (prepack), and the sim command builds first"
clean="$work/clean"
mkdir "$clean"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$clean")
ln -s "$root/node_modules" "$clean/node_modules"
[ ! -e "$clean/dist" ] || fail "the clean copy has a dist/"
(cd "$clean" && npm pack --dry-run --json 2>/dev/null) > "$work/clean-pack.json"
node -e 'const files = require(process.argv[1])[0].files.map((f) => f.path); for (const f of ["dist/src/index.js", "dist/src/cli.js", "dist/reporters/speed-matrix.js", "dist/schemas/speed-matrix.schema.json"]) if (!files.includes(f)) { console.error("npm pack of a clean checkout lacks " + f); process.exit(1) } console.log("npm pack of a clean checkout:", files.filter((f) => f.startsWith("dist/")).length, "files under dist/")' "$work/clean-pack.json"
rm -rf "$clean/dist" "$clean/.dist-built.json"
out="$(cd "$clean" && node bin/llm-speed-matrix.mjs sim --help 2>&1)" || fail "sim --help in a clean checkout: $out"
[[ "$out" == *"building dist/"* ]] || fail "sim in a clean checkout did not build dist/ first: $out"
echo "sim in a clean checkout: built dist/ first, then answered"

step "a fresh project with the tarball but without vitest (a missing peer)"
proj="$work/my-infra"
mkdir "$proj" && cd "$proj"
npm init -y >/dev/null
npm i --no-audit --no-fund --legacy-peer-deps "$tarball" >/dev/null
set +e
out="$(npx --no-install llm-speed-matrix init 2>&1)"; code=$?
set -e
echo "$out"
[ "$code" -eq 2 ] || fail "init without vitest exited $code, expected 2"
[[ "$out" == *"vitest is not installed"*"Fix: npm i -D vitest"* ]] || fail "init without vitest did not name the fix"
[ ! -e bench ] || fail "init without vitest wrote files"
set +e
out="$(node --input-type=module -e "const m = await import('llm-speed-matrix'); await m.defineSpeedMatrix()" 2>&1)"; code=$?
set -e
[ "$code" -ne 0 ] && [[ "$out" == *"vitest is not installed"*"Fix: npm i -D vitest"* ]] || fail "defineSpeedMatrix without vitest: $out"
echo "defineSpeedMatrix without vitest: $(echo "$out" | grep -m1 'vitest is not installed')"

step "npm i vitest; init"
npm i --no-audit --no-fund -D "vitest@$vitest_version" >/dev/null
npx --no-install llm-speed-matrix init
for f in bench/speed-matrix.bench.ts bench/suite.ts bench/shards/row-group-1.bench.ts vitest.config.mts thresholds/README.md .github/workflows/speed-matrix.yml; do
  [ -s "$f" ] || fail "init did not write $f"
done
! grep -rn "llm-speed-matrix/src\|\.\./src/" bench vitest.config.mts || fail "init's files import package internals"

step "init again: keeps everything; a foreign vitest config is not clobbered"
npx --no-install llm-speed-matrix init | grep -q "unchanged" || fail "second init did not report unchanged files"
other="$work/other" && mkdir "$other" && cp package.json "$other/" && ln -s "$proj/node_modules" "$other/node_modules"
printf "import { defineConfig } from 'vitest/config';\nexport default defineConfig({});\n" > "$other/vitest.config.ts"
before="$(cat "$other/vitest.config.ts")"
set +e
out="$(cd "$other" && npx --no-install llm-speed-matrix init 2>&1)"; code=$?
set -e
[ "$code" -eq 1 ] || fail "init with a foreign vitest.config.ts exited $code, expected 1"
[[ "$out" == *"withSpeedMatrix"* ]] || fail "init did not print the line to add"
[ "$before" == "$(cat "$other/vitest.config.ts")" ] || fail "init changed the user's vitest.config.ts"
[[ "$out" == *"first: add withSpeedMatrix to vitest.config.ts"* && "$out" != *"next:"* ]] || fail "init with a foreign config printed a next step that cannot work yet: $out"
# the bench files are there but the config lacks the line: the run fails naming it (not exit 0, no page)
set +e
out="$(cd "$other" && LLM_BENCH_SIM_PROFILE=tiny npx --no-install vitest bench --run 2>&1)"; code=$?
set -e
[ "$code" -ne 0 ] && [[ "$out" == *"your Vitest config has no withSpeedMatrix"* ]] || { echo "$out" | tail -20; fail "vitest bench without withSpeedMatrix exited $code without naming the fix"; }
echo "foreign config: kept, exit 1, line printed and no next step; vitest bench without the line: exit $code, names withSpeedMatrix"
set +e
out="$(timeout 60 npx --no-install vitest bench --watch --ui --open=false < /dev/null 2>&1)"
set -e
[[ "$out" == *"--ui needs @vitest/ui"*"Fix: npm i -D @vitest/ui@$vitest_version"* ]] || { echo "$out" | tail -20; fail "vitest --ui without @vitest/ui did not name the fix"; }
echo "--ui without @vitest/ui: $(echo "$out" | grep -m1 -o 'Fix: npm i -D @vitest/ui@[0-9.]*')"

step "the workflow fits the package manager (npm here; pnpm and yarn projects), and passes an offline linter"
# @action-validator/cli checks a workflow against GitHub's schema (keys, needs, expressions' places) without a network
lint() { npx -y @action-validator/cli@0.6.0 "$1" || fail "the workflow init wrote ($1) does not pass action-validator"; }
grep -q "run: npm ci" .github/workflows/speed-matrix.yml || fail "the npm project's workflow does not run npm ci"
lint .github/workflows/speed-matrix.yml
for pm in "pnpm pnpm-lock.yaml pnpm@10.4.1 pnpm install --frozen-lockfile" "yarn yarn.lock yarn@4.5.0 yarn install --immutable"; do
  set -- $pm
  pmdir="$work/pm-$1" && mkdir "$pmdir" && ln -s "$proj/node_modules" "$pmdir/node_modules" && : > "$pmdir/$2"
  node -e "const p = require('$proj/package.json'); p.packageManager = '$3'; require('fs').writeFileSync('$pmdir/package.json', JSON.stringify(p))"
  (cd "$pmdir" && npx --no-install llm-speed-matrix init >/dev/null)
  wf="$pmdir/.github/workflows/speed-matrix.yml"
  shift 3
  grep -q "run: $*" "$wf" || fail "the $pm project's workflow does not install with '$*'"
  ! grep -q "npm ci\|cache: npm\|npx " "$wf" || fail "the $pm project's workflow still uses npm"
  lint "$wf"
  echo "workflow for $(basename "$pmdir"): installs with '$*', lint ok"
done

step "the project's own tests: a plain \`vitest run\` runs them, and no matrix cell"
mkdir -p test && printf "import { expect, test } from 'vitest';\ntest('own test', () => expect(1 + 1).toBe(2));\n" > test/own.test.ts
npx --no-install vitest run > "$work/own.log" 2>&1 || { cat "$work/own.log"; fail "the project's own vitest run failed"; }
grep -q "1 passed" "$work/own.log" || fail "the project's own test did not run"
! grep -q "decode\|speed-matrix\]" "$work/own.log" || fail "a plain vitest run ran matrix cells"
echo "own tests: 1 passed, no matrix cell"

step "the README's first run: LLM_BENCH_SIM_PROFILE=tiny npx vitest bench --run (Node $(node -v))"
LLM_BENCH_QUIET=1 LLM_BENCH_SIM_PROFILE=tiny npx --no-install vitest bench --run 2>&1 | tee "$work/first.log"
node "$here/check-result.mjs" reports 12
! grep -q "loaded as CommonJS" "$work/first.log" || fail "Vite warns about the config init wrote"

small=(env LLM_BENCH_QUIET=1 LLM_BENCH_SIM_PROFILE=tiny LLM_BENCH_CONTEXTS=0,1K LLM_BENCH_CONCURRENCY=1,2 LLM_BENCH_PREFILL=1K LLM_BENCH_DURATION_S=2 LLM_BENCH_MAX_TOKENS=64)
for v in 22 24; do
  step "the same project, unchanged, on Node $v"
  rm -rf reports
  "${small[@]}" npx -y -p "node@$v" -- node node_modules/vitest/vitest.mjs bench --run
  node "$here/check-result.mjs" reports 4 "v$v."
done

step "the workflow's sharded commands: two shards (blob reports), then one merged page"
rm -rf reports .vitest-reports
for i in 1 2; do
  "${small[@]}" npx --no-install vitest run --project matrix-sharded --shard="$i/2" --reporter=blob --reporter=default --outputFile.blob=".vitest-reports/blob-$i-2.json" >/dev/null 2>&1 \
    || fail "shard $i/2 failed"
done
LLM_BENCH_OUT=reports npx --no-install vitest --merge-reports=.vitest-reports >/dev/null 2>&1 || fail "the merge failed"
node "$here/check-result.mjs" reports 4
rm -rf .vitest-reports

step "a threshold breach exits 1 (and still writes the page)"
rm -rf reports
cat > thresholds/sim-tiny.json <<'JSON'
{ "cells": { "0/1": { "min": { "perRequestTokensPerSecond": 1000000 } } } }
JSON
set +e
"${small[@]}" npx --no-install vitest bench --run > "$work/breach.log" 2>&1; code=$?
set -e
[ "$code" -eq 1 ] || { tail -30 "$work/breach.log"; fail "a threshold breach exited $code, expected 1"; }
grep -q "perRequestTokensPerSecond" "$work/breach.log" || fail "the breach is not named in the output"
node "$here/check-result.mjs" reports 4
echo "breach: exit 1, $(grep -m1 -o '0/1 perRequestTokensPerSecond[^)]*' "$work/breach.log" || true)"
rm thresholds/sim-tiny.json

step "-u writes the threshold file, pointing at the shipped schema"
"${small[@]}" npx --no-install vitest bench --run -u >/dev/null 2>&1
node -e "
const fs = require('fs'), path = require('path');
const t = JSON.parse(fs.readFileSync('thresholds/sim-tiny.json', 'utf8'));
const schema = path.resolve('thresholds', t.\$schema);
if (!fs.existsSync(schema)) { console.error('\$schema does not resolve:', t.\$schema); process.exit(1); }
console.log('thresholds/sim-tiny.json:', Object.keys(t.cells).length, 'cells; \$schema', t.\$schema);"

step "init's sample prompt file, as init's next steps run it after -u wrote thresholds/sim-tiny.json: its own threshold file (LLM_BENCH_NAME)"
rm -rf reports
LLM_BENCH_QUIET=1 LLM_BENCH_SIM_PROFILE=tiny LLM_BENCH_NAME=sim-tiny-sample LLM_BENCH_CONCURRENCY=1 LLM_BENCH_DURATION_S=1 LLM_BENCH_MAX_TOKENS=16 LLM_BENCH_WORKLOAD=file:bench/workloads/sample.jsonl \
  npx --no-install vitest bench --run > "$work/sample.log" 2>&1 || { tail -30 "$work/sample.log"; fail "the sample workload run failed"; }
node -e 'const r = require(process.argv[1]); const w = r.info.run.workload; if (!w || w.kind !== "file" || r.cells.length !== 1) { console.error("sample run: workload", w, "cells", r.cells.length); process.exit(1) } console.log("sample workload:", w.text, "·", r.cells[0].status)' "$PWD/reports/speed-matrix.json"

step "types resolve under moduleResolution node16 and bundler; a wrong path names the entry points"
npm i --no-audit --no-fund -D "typescript@$(node -p "require('$root/package.json').devDependencies.typescript")" "@types/node@$(node -p "require('$root/package.json').devDependencies['@types/node']")" >/dev/null
cp "$here/types-check.mts" .
# the files init wrote type-check against the package's types too
npx --no-install tsc --noEmit --strict --skipLibCheck --types node --module esnext --moduleResolution bundler --target es2022 \
  bench/suite.ts bench/speed-matrix.bench.ts bench/shards/*.bench.ts vitest.config.mts || fail "the files init wrote do not type-check"
echo "types: init's files ok"
for mode in "node16 node16" "esnext bundler"; do
  set -- $mode
  npx --no-install tsc --noEmit --strict --skipLibCheck false --types node --module "$1" --moduleResolution "$2" --target es2022 types-check.mts \
    || fail "types do not resolve under moduleResolution $2"
  echo "types: moduleResolution $2 ok"
done
set +e
out="$(node --input-type=module -e "await import('llm-speed-matrix/reporters/speed-matrix.js')" 2>&1)"; code=$?
set -e
[ "$code" -ne 0 ] && [[ "$out" == *"not an entry point of llm-speed-matrix. Fix: import one of"* ]] || fail "a wrong path: $out"
echo "wrong path: $(echo "$out" | grep -m1 -o 'ConfigError: .\{0,90\}')…"

# Vitest 5 (it needs Node 22.12+): npm itself runs on Node 22 / 24 here, so it picks versions as a
# user's npm on that Node does (Vitest 5 for a plain `vitest`, as the README's install line says)
node22="$(npx -y -p node@22 -- node -p process.execPath)"
node24="$(npx -y -p node@24 -- node -p process.execPath)"
npm_cli="$(npm root -g)/npm/bin/npm-cli.js"
[ -f "$npm_cli" ] || fail "npm's CLI script is not at $npm_cli"
step "Vitest 5 on Node $("$node22" -v): the README's install line in a fresh project, init, the tiny matrix"
started5=$SECONDS
proj5="$work/my-infra-v5"
mkdir "$proj5" && cd "$proj5"
npm init -y >/dev/null
"$node22" "$npm_cli" i -D --no-audit --no-fund "$tarball" vitest >/dev/null
v5="$(node -p "require('./node_modules/vitest/package.json').version")"
[[ "$v5" == 5.* ]] || fail "npm on Node 22 installed vitest $v5 for the README's line, expected 5.x (a new major: check it, then widen the peer range and this step)"
"$node22" "$npm_cli" ls --all >/dev/null 2>&1 || { "$node22" "$npm_cli" ls; fail "npm ls marks the Vitest $v5 install invalid (the peer range)"; }
echo "installed vitest $v5; npm ls clean"
"$node22" node_modules/llm-speed-matrix/bin/llm-speed-matrix.mjs init > "$work/init5.log" 2>&1 || { cat "$work/init5.log"; fail "init with vitest $v5 failed"; }
grep -q "wrote     vitest.config.mts" "$work/init5.log" || { cat "$work/init5.log"; fail "init with vitest $v5 did not write the config"; }
"${small[@]}" "$node22" node_modules/vitest/vitest.mjs bench --run > "$work/v5.log" 2>&1 || { tail -40 "$work/v5.log"; fail "vitest $v5 bench --run failed"; }
grep -q "RUN  *v5\." <(sed 's/\x1b\[[0-9;]*m//g' "$work/v5.log") || fail "the run did not report Vitest 5"
node "$here/check-result.mjs" reports 4
mkdir -p test && printf "import { expect, test } from 'vitest';\ntest('own test', () => expect(1 + 1).toBe(2));\n" > test/own.test.ts
"$node22" node_modules/vitest/vitest.mjs run > "$work/own5.log" 2>&1 || { cat "$work/own5.log"; fail "the project's own vitest run failed on vitest $v5"; }
grep -q "1 passed" "$work/own5.log" && ! grep -q "decode" "$work/own5.log" || fail "vitest $v5 run: own test not run, or matrix cells ran"
echo "own tests on vitest $v5: 1 passed, no matrix cell"

step "Vitest $v5 on Node $("$node24" -v): a project that has Vitest 5 installs the package (no ERESOLVE); shards + merge; -u; a breach"
"$node24" "$npm_cli" i -D --no-audit --no-fund "$tarball" >/dev/null || fail "installing the tarball into a project with vitest $v5 failed (peer range)"
rm -rf reports .vitest-reports
for i in 1 2; do
  "${small[@]}" "$node24" node_modules/vitest/vitest.mjs run --project matrix-sharded --shard="$i/2" --reporter=blob --reporter=default --outputFile.blob=".vitest-reports/blob-$i-2.json" >/dev/null 2>&1 \
    || fail "vitest $v5 shard $i/2 failed"
done
LLM_BENCH_OUT=reports "$node24" node_modules/vitest/vitest.mjs --merge-reports=.vitest-reports >/dev/null 2>&1 || fail "the vitest $v5 merge failed"
node "$here/check-result.mjs" reports 4
# a merge without shard 2's blob fails, naming it (Vitest 5 tells the reporter it merges, as 4.1 does)
mkdir -p "$work/one5" && cp .vitest-reports/blob-1-2.json "$work/one5/"
set +e
LLM_BENCH_OUT="$work/one5-out" "$node24" node_modules/vitest/vitest.mjs --merge-reports="$work/one5" > "$work/one5.log" 2>&1; code=$?
set -e
[ "$code" -eq 1 ] && grep -q "blob-2-2.json is not there" "$work/one5.log" || { tail -20 "$work/one5.log"; fail "a vitest $v5 merge without shard 2's blob exited $code, expected 1 naming blob-2-2.json"; }
echo "merge without a shard's blob under vitest $v5: exit 1, named"
# a stale copy of shard 1's blob beside it: its files are in two blobs, no final page (Vitest 5 hands such a file on once, 4.1 twice: the blobs are read)
cp .vitest-reports/blob-1-2.json .vitest-reports/blob-2-2.json "$work/one5/" && cp .vitest-reports/blob-1-2.json "$work/one5/blob-1-2-old.json"
set +e
LLM_BENCH_OUT="$work/stale5-out" "$node24" node_modules/vitest/vitest.mjs --merge-reports="$work/one5" > "$work/stale5.log" 2>&1; code=$?
set -e
[ "$code" -eq 1 ] && grep -q "in blob-1-2-old.json and blob-1-2.json" "$work/stale5.log" || { tail -20 "$work/stale5.log"; fail "a vitest $v5 merge with a stale blob exited $code, expected 1 naming the cells measured twice"; }
echo "merge with a stale blob under vitest $v5: exit 1, named"
"${small[@]}" "$node24" node_modules/vitest/vitest.mjs bench --run -u > "$work/u5.log" 2>&1 || { tail -30 "$work/u5.log"; fail "vitest $v5 bench --run -u failed"; }
# every cell is written, or listed as not written (a Client-limited cell the simulator's run lets pass on a small machine)
node -e "const t = require('./thresholds/sim-tiny.json'); const skipped = (require('fs').readFileSync('$work/u5.log', 'utf8').match(/^ +[0-9]+K?\/[0-9]+ \(no budget\)/gm) || []).length; if (Object.keys(t.cells).length + skipped !== 4) { console.error('-u under vitest $v5 wrote', Object.keys(t.cells), 'and listed', skipped, 'as not written'); process.exit(1) } console.log('-u under vitest $v5: thresholds/sim-tiny.json with', Object.keys(t.cells).length, 'cells,', skipped, 'not written')"
echo '{ "cells": { "0/1": { "min": { "perRequestTokensPerSecond": 1000000 } } } }' > thresholds/sim-tiny.json
set +e
"${small[@]}" LLM_BENCH_CONTEXTS=0 LLM_BENCH_CONCURRENCY=1 LLM_BENCH_DURATION_S=1 "$node24" node_modules/vitest/vitest.mjs bench --run > "$work/breach5.log" 2>&1; code=$?
set -e
[ "$code" -eq 1 ] && grep -q "0/1 perRequestTokensPerSecond" "$work/breach5.log" || { tail -30 "$work/breach5.log"; fail "a breach under vitest $v5 exited $code, expected 1 naming the budget"; }
echo "breach under vitest $v5: exit 1, named"
"$node24" "$npm_cli" i -D --no-audit --no-fund "typescript@$(node -p "require('$root/package.json').devDependencies.typescript")" "@types/node@22" >/dev/null
cp "$here/types-check.mts" .
"$node24" node_modules/typescript/bin/tsc --noEmit --strict --skipLibCheck --types node --module esnext --moduleResolution bundler --target es2022 \
  bench/suite.ts bench/speed-matrix.bench.ts bench/shards/*.bench.ts vitest.config.mts || fail "init's files do not type-check against vitest $v5"
"$node24" node_modules/typescript/bin/tsc --noEmit --strict --skipLibCheck false --types node --module node16 --moduleResolution node16 --target es2022 types-check.mts \
  || fail "the package's types do not compile against vitest $v5"
echo "types against vitest $v5: ok"
echo "Vitest 5 steps: $((SECONDS - started5)) s"

echo "pack-check OK"
