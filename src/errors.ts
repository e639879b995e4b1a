/**
 * The project's one error base class (STYLE.md habit 7, as undici's `UND_ERR_*`): every error this
 * package throws on purpose is a SpeedMatrixError with a stable `code`, so a caller can catch them
 * all with one `instanceof` and branch on `code` rather than on message text. The subclasses say
 * where it came from:
 *
 * | class            | codes                                                             | thrown for                                   |
 * |------------------|-------------------------------------------------------------------|----------------------------------------------|
 * | ConfigError      | `config`                                                          | a configuration or setup mistake by the user |
 * | ThresholdsError  | `thresholds`                                                      | an invalid threshold file                    |
 * | ProbeError       | `unreachable`, `not-ready`, `unauthorized`, `no-model`, `tls`     | a server that cannot be benchmarked          |
 * | HttpCallError    | `timeout`, `aborted`, `transport`                                 | a failed non-streaming call (probe, metrics) |
 * | ClientError      | `invalid-option`, and the request failure codes of RequestEnd     | invalid client options; SSE protocol errors  |
 * | CellFailure      | `cell-failed`                                                     | a cell that ran and failed its verdicts      |
 *
 * A failed benchmark request is never thrown: it is data on its timeline and its cell.
 */
export class SpeedMatrixError<Code extends string = string> extends Error {
  override name = 'SpeedMatrixError';
  // a private field behind a getter, not an own property: Vitest prints an error's own fields under
  // its message ("Serialized Error: { code: 'config' }")
  readonly #code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.#code = code;
  }

  get code(): Code {
    return this.#code;
  }
}

/**
 * An expected error shown as one clean line: a SpeedMatrixError's stack becomes its `name: message`
 * (no frames, so Vitest prints no code frame or trace under the message). With `debug`
 * (LLM_BENCH_DEBUG=1) it keeps its stack; any other error is left as it is.
 */
export function asUserError<E>(error: E, debug: boolean): E {
  if (!debug && error instanceof SpeedMatrixError) error.stack = `${error.name}: ${error.message}`;
  return error;
}

/** A configuration or setup mistake by the user: the message names the field, the rule and the fix. */
export class ConfigError extends SpeedMatrixError<'config'> {
  override name = 'ConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('config', message, options);
  }
}

/**
 * A cell, prefill row or capacity figure that ran and failed its verdicts (a status that is not
 * Valid, a budget, a baseline): the failure is the benchmark's finding, not a fault in the code, so
 * it is shown as its lines alone, without the code frame and trace Vitest prints under an error
 * thrown from a file of ours (LLM_BENCH_DEBUG=1 keeps them, as for asUserError).
 */
export class CellFailure extends SpeedMatrixError<'cell-failed'> {
  override name = 'CellFailure';
  constructor(lines: string | readonly string[], debug: boolean) {
    super('cell-failed', typeof lines === 'string' ? lines : lines.join('\n'));
    asUserError(this, debug);
  }
}
