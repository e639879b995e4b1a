import { SpeedMatrixError } from '../errors.js';

/** A configuration or setup mistake by the user: the message names the field, the rule and the fix. */
export class ConfigError extends SpeedMatrixError<'config'> {
  override name = 'ConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('config', message, options);
  }
}
