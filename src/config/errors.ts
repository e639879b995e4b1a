/** A configuration or setup mistake by the user: the message names the field, the rule and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
